import type { App } from './types.js';

/**
 * The headers of every answer under the pages the service serves to a browser (the console
 * at /console, the reference at /docs), files and errors included: the page's own
 * Content-Security-Policy; no content-type sniffing; no frame around it and no referrer out
 * of it; a window that opens it keeps no handle on it (and it none on its opener); and, when
 * the service's public address is https, HSTS (docs/console.md, "Security headers").
 */
export function pageHeaders(csp: string, https: boolean): Record<string, string> {
  return {
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    ...(https ? { 'strict-transport-security': 'max-age=31536000' } : {}),
  };
}

/** Puts `headers` on every answer of the routes of `scope` (an encapsulated plugin). */
export function sendPageHeaders(scope: App, headers: Record<string, string>): void {
  scope.addHook('onSend', (_req, reply, payload, done) => {
    void reply.headers(headers);
    done(null, payload);
  });
}
