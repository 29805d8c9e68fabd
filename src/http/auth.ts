import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './types.js';
import { forbidden, unauthenticated } from '../lib/errors.js';
import type { GrantSite } from '../lib/grants.js';
import type { AuthContext, Permission, VerifyResult } from '../lib/permissions.js';

/**
 * How a route authenticates (declared next to the route, in `config.auth`):
 * - `none`: public; credentials are ignored.
 * - `optional`: a credential is used when sent, else the call is anonymous.
 * - `either`: bearer token or API key (the default for any route that says nothing).
 * - `bearer`: a signed-in person's token only; an API key → 401 code 16 (docs/api.md,
 *   "Credentials").
 * - `person`: either credential authenticates, but an API key is refused with 403 code 7.
 */
export type AuthMode = 'none' | 'optional' | 'either' | 'bearer' | 'person';

/**
 * The permission a route needs, declared next to it (`config.permission`). `authenticated`
 * says on purpose that any authenticated caller may call it (the service checks the rest,
 * e.g. "own sessions only").
 */
export type RoutePermission = Permission | 'authenticated';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    permission?: RoutePermission;
    /** The route gives a wallet or a key power there (src/lib/grants.ts, GRANT_SITES). */
    grants?: GrantSite;
    /**
     * Its answers are kept by no cache (`Cache-Control: no-store`) even without a credential:
     * set by app.ts on every route whose answer carries tokens (docs/api.md, "Caching").
     */
    noStore?: boolean;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

/**
 * Counts a request refused for its credential (none, malformed or not valid) against its
 * client address, as anonymous traffic (src/http/rate-limit/hook.ts), and answers the 429
 * to send instead of the 401 once that address is over its limit; null: answer the 401.
 */
export type RefusalLimit = (req: FastifyRequest, reply: FastifyReply) => Promise<Error | null>;

/** Filled in by the features that own each credential (sign-in, API keys). */
export interface CredentialVerifiers {
  bearer(token: string): Promise<VerifyResult>;
  apiKey(key: string): Promise<VerifyResult>;
}

const BEARER_RE = /^Bearer ([A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]*)$/;
const MAX_CREDENTIAL_LENGTH = 4096;

type Credential =
  | { kind: 'bearer' | 'api_key'; value: string }
  | { kind: 'none' }
  | { kind: 'malformed' }
  | { kind: 'v2' };

/** What a v2 client still sending App-Id and App-Secret is told (docs/api.md, "Credentials"). */
const V2_CREDENTIAL_MESSAGE =
  'App-Id and App-Secret are v2 credentials and authenticate nothing; send an API key in x-api-key or a token in Authorization: Bearer';

function readCredential(req: FastifyRequest): Credential {
  const authz = req.headers.authorization;
  const key = req.headers['x-api-key'];
  if (authz !== undefined) {
    if (typeof authz !== 'string' || authz.length > MAX_CREDENTIAL_LENGTH)
      return { kind: 'malformed' };
    const m = BEARER_RE.exec(authz.trim());
    return m ? { kind: 'bearer', value: m[1]! } : { kind: 'malformed' };
  }
  if (key !== undefined) {
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_CREDENTIAL_LENGTH) {
      return { kind: 'malformed' };
    }
    return { kind: 'api_key', value: key.trim() };
  }
  if (req.headers['app-id'] !== undefined || req.headers['app-secret'] !== undefined) {
    return { kind: 'v2' };
  }
  return { kind: 'none' };
}

/** The request's caller; throws 401 code 16 when the route let an anonymous call through. */
export function authOf(req: FastifyRequest): AuthContext {
  if (!req.auth) throw unauthenticated('no auth provided');
  return req.auth;
}

/**
 * Resolves the caller before the body is parsed, so an unauthenticated request is
 * refused without reading it, then checks the route's declared permission. A refused
 * credential counts as anonymous traffic of its client address (`limitRefusal`): a flood of
 * bad credentials from one address is answered 429 like any other anonymous flood.
 *
 * It also marks the answers no cache may keep (docs/api.md, "Caching"): every answer to a
 * request that carries a credential, whatever the route and whatever the outcome, and every
 * answer of a route whose answer carries tokens (`config.noStore`). Here rather than in a hook
 * of its own: this hook runs on every request already, and a route that sets its own
 * Cache-Control later (a file download) replaces this one.
 */
export function registerAuth(
  app: App,
  verifiers: CredentialVerifiers,
  limitRefusal: RefusalLimit | null = null,
) {
  app.decorateRequest('auth', null);
  const refuse = async (req: FastifyRequest, reply: FastifyReply, message: string) => {
    throw (limitRefusal && (await limitRefusal(req, reply))) ?? unauthenticated(message);
  };
  app.addHook('onRequest', async (req, reply) => {
    const config = req.routeOptions.config;
    const headers = req.headers;
    if (
      headers.authorization !== undefined ||
      headers['x-api-key'] !== undefined ||
      config.noStore === true
    ) {
      void reply.header('cache-control', 'no-store');
    }
    if (req.routeOptions.url === undefined) return; // unknown route: the 404 handler answers
    const mode: AuthMode = config.auth ?? 'either';
    if (mode === 'none') return;
    const cred = readCredential(req);
    if (cred.kind === 'none') {
      if (mode === 'optional') return;
      return refuse(req, reply, 'no auth provided');
    }
    if (cred.kind === 'malformed') return refuse(req, reply, 'malformed credential');
    if (cred.kind === 'v2') return refuse(req, reply, V2_CREDENTIAL_MESSAGE);
    if (cred.kind === 'api_key' && mode === 'bearer') {
      return refuse(req, reply, 'this call needs a bearer token of a signed-in person');
    }
    const result =
      cred.kind === 'bearer'
        ? await verifiers.bearer(cred.value)
        : await verifiers.apiKey(cred.value);
    if (!result.ok) return refuse(req, reply, result.reason);
    if (mode === 'person' && result.auth.kind === 'api_key') {
      throw forbidden('needs a signed-in person');
    }
    req.auth = result.auth;
    const perm = config.permission;
    if (perm && perm !== 'authenticated' && !result.auth.permissions.has(perm)) {
      throw forbidden(`missing permission ${perm}`);
    }
  });
}
