import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { Code } from '../lib/errors.js';
import { pageHeaders, sendPageHeaders } from './page-headers.js';
import type { App } from './types.js';

/**
 * The console's pages may load only their own scripts, styles, images and fonts and call
 * only this service; nothing inline runs, nothing frames them, no plugin or <base> applies.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface ConsoleOptions {
  /** The built console (console/dist); its index.html must be there to serve it. Null: none. */
  dir: string | null;
  logger: FastifyBaseLogger;
  /** PUBLIC_URL is https: the answers carry HSTS. */
  https: boolean;
}

/** A path that names a file (it has an extension); any other path is one of the app's pages. */
const FILE_PATH_RE = /\.[A-Za-z0-9]+$/;

/**
 * Serves the web console at /console: its files as they are, and index.html for every other
 * path under it (the app routes in the browser, so a deep link is a page). The same two routes
 * exist whether or not the console was built, so the route table never depends on a build;
 * without a build they answer 503 code 14 and the API works as ever.
 */
export async function registerConsole(app: App, opts: ConsoleOptions): Promise<void> {
  const root = opts.dir;
  const built = root !== null && existsSync(path.join(root, 'index.html'));
  if (root !== null && !built) {
    opts.logger.warn(
      { dir: opts.dir },
      'the web console is not built: /console answers 503 until `npm run build` has run',
    );
  }
  await app.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: 'none' };
    });
    sendPageHeaders(scope, pageHeaders(CONSOLE_CSP, opts.https));
    if (built) {
      // Only reply.sendFile is used: the routes below decide what each path serves. A path
      // with a segment that starts with a dot (`.env`, `.git/config`) is never a file of
      // the build: answered as missing, whether or not it is there.
      await scope.register(fastifyStatic, { root, serve: false, dotfiles: 'ignore' });
    }

    const sendIndex = (reply: FastifyReply) =>
      reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });

    scope.get('/console', { schema: { hide: true } }, (_req, reply) =>
      reply.redirect('/console/', 301),
    );
    scope.get<{ Params: { '*': string } }>(
      '/console/*',
      { schema: { hide: true } },
      (req, reply) => {
        if (!built) {
          return reply.status(503).send({
            code: Code.UNAVAILABLE,
            message: 'the web console is not built on this server (run `npm run build`)',
          });
        }
        const file = req.params['*'];
        if (file === '' || file === 'index.html') return sendIndex(reply);
        // Nothing outside the build: `send` would refuse it too, but as an error (a 500 here).
        if (file.includes('\\') || file.split('/').some((s) => s === '..' || s === '.')) {
          return reply.callNotFound();
        }
        // A missing file falls through to the service's JSON 404 (sendFile calls it).
        if (FILE_PATH_RE.test(file)) {
          // Built asset names carry their content hash, so they never change.
          return file.startsWith('assets/')
            ? reply.sendFile(file, { maxAge: '365d', immutable: true })
            : reply.sendFile(file);
        }
        return sendIndex(reply);
      },
    );
  });
}
