import swaggerUi from '@fastify/swagger-ui';
import { pageHeaders, sendPageHeaders } from './page-headers.js';
import type { App } from './types.js';

/** The reference page's Content-Security-Policy (/docs and its files). */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface DocsOptions {
  /** PUBLIC_URL is https: the answers carry HSTS. */
  https: boolean;
}

/** The reference page's own paths; a query string there is dropped by a redirect. */
const PAGE_URLS = new Set(['/docs', '/docs/']);

/**
 * The API reference (Swagger UI over /openapi.json) at /docs. It runs only its own files: no
 * script from anywhere else, no frame around it, no form or fetch leaving the service
 * (docs/api.md, first paragraph); Swagger UI sets style attributes, hence the inline styles.
 */
export async function registerDocs(app: App, opts: DocsOptions): Promise<void> {
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: 'none' };
    });
    // Swagger UI builds the description's address from the page's whole address, query
    // included (`/docs/?x=1` would load `/docs/?x=1/./json`, the page again): the page is
    // sent once more without the query, which it never reads. The fragment (a deep link to
    // an operation) stays: browsers keep it across a redirect.
    docs.addHook('onRequest', (req, reply, done) => {
      const q = req.url.indexOf('?');
      if (q === -1 || !PAGE_URLS.has(req.routeOptions.url ?? '')) return done();
      void reply.redirect(req.url.slice(0, q), 302);
    });
    sendPageHeaders(docs, pageHeaders(DOCS_CSP, opts.https));
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      // Its validator badge would load an image from a third-party host.
      uiConfig: { validatorUrl: null },
    });
  });
}
