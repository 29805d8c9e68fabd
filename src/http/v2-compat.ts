import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Code, invalid } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { App } from './types.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Marks the v2 compatibility answers, which are no routes of the API. */
    v2?: boolean;
  }
}

export interface V2Options {
  /** From this instant on the v2 paths answer 410 instead of redirecting. */
  sunset: Date;
  clock: Clock;
}

/**
 * The v2 rename table (docs/api.md, "v2 paths"). Some v3 targets (`/wallets/login`,
 * `/wallets/register`, `/wallets/token/refresh`) are not routes of this service (it signs in
 * under `/auth/*`); the redirect still names them, and docs/api.md says so.
 */
export const V2_RENAMES: readonly (readonly [v2: string, v3: string])[] = [
  ['/user/profile', '/wallets/me'],
  ['/user/login', '/wallets/login'],
  ['/user/register', '/wallets/register'],
  ['/vatoms', '/objects'],
  ['/activity', '/ebus/actions'],
  ['/user/token/refresh', '/wallets/token/refresh'],
];

// What may stay as sent in a path or query; anything else (quotes, angle brackets, spaces,
// non-ASCII) is percent-encoded, so the Location and Link headers hold nothing a client
// could read as another header, a host or the end of the link.
const UNSAFE = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]/g;

function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE, (c) =>
    Array.from(Buffer.from(c, 'utf8'), (b) => `%${b.toString(16).toUpperCase()}`).join(''),
  );
}

/**
 * The v3 address of a v2 request: the v3 path, then what followed the v2 path, then the
 * query. Only the path of the request is used, never a host, and it always starts with the
 * fixed v3 prefix, so the redirect cannot lead off this service.
 */
function successorOf(rawUrl: string, v2: string, v3: string): { path: string; url: string } {
  const q = rawUrl.indexOf('?');
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
  const rest = path.slice(v2.length);
  const v3Path = escapeUnsafe(v3 + rest);
  const query = q === -1 ? '' : escapeUnsafe(rawUrl.slice(q + 1));
  return { path: v3Path, url: query ? `${v3Path}?${query}` : v3Path };
}

/**
 * The v2 compatibility layer (docs/api.md, "v2 paths"): every method on each renamed path and below
 * it answers a 301 to its v3 path until the sunset, then 410. No credential is needed; the
 * answers are not part of the v3 description (hidden from /openapi.json) nor of the route
 * table.
 */
export function registerV2Compat(app: App, opts: V2Options) {
  const sunsetHeader = opts.sunset.toUTCString();
  const sunsetDay = opts.sunset.toISOString();
  for (const [v2, v3] of V2_RENAMES) {
    const handler = (req: FastifyRequest, reply: FastifyReply) => {
      const to = successorOf(req.url, v2, v3);
      void reply.header('deprecation', 'true').header('sunset', sunsetHeader);
      if (opts.clock.now().getTime() < opts.sunset.getTime()) {
        return reply.redirect(to.url, 301);
      }
      void reply.header('link', `<${to.path}>; rel="successor-version"`);
      throw new AppError(
        Code.NOT_FOUND,
        `the v2 path ${v2} was removed on ${sunsetDay}; use ${to.path}`,
        undefined,
        410,
      );
    };
    for (const url of [v2, `${v2}/*`]) {
      app.all(url, { config: { auth: 'none', v2: true }, schema: { hide: true } }, handler);
    }
  }
}

/** A list route: its query takes a `next` cursor (src/lib/list.ts and the lists beside it). */
function isListRoute(req: FastifyRequest): boolean {
  const query = (req.routeOptions.schema as { querystring?: { properties?: object } } | undefined)
    ?.querystring;
  return query?.properties !== undefined && Object.hasOwn(query.properties, 'next');
}

/**
 * v2 paged with `offset` (docs/api.md, "Lists"). A list would otherwise ignore it like any unknown
 * query parameter and answer the first page again, which a v2 client reads as every page being
 * the same: so every list refuses it, naming what to send instead.
 */
export function registerOffsetRefusal(app: App) {
  app.addHook('preValidation', (req, _reply, done) => {
    const query = req.query as Record<string, unknown> | undefined;
    if (query && Object.hasOwn(query, 'offset') && isListRoute(req)) {
      done(
        invalid(
          'offset paging is not supported; page with limit and next (the cursor each page returns)',
          [{ field: 'offset', reason: 'is not supported; use limit and next' }],
        ),
      );
      return;
    }
    done();
  });
}
