import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { REPLAYED_HEADER } from '../../http/idempotency/replayed.js';
import type { App } from '../../http/types.js';
import { canonicalJson } from '../../lib/canonical-json.js';
import { Code } from '../../lib/errors.js';
import type { AuthContext } from '../../lib/permissions.js';
import {
  checkKey,
  MAX_KEY_LENGTH,
  type IdempotencyService,
  type KeyId,
  type StoredAnswer,
} from './service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route honours `Idempotency-Key` (docs/api.md, "Idempotent requests"): a creating
     * POST that needs a credential.
     */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    /** The key this request holds as the first of its retries (set by the hook below). */
    idempotency?: { id: KeyId; hash: string };
    /**
     * A multipart request's key, waiting for the route to read the body (`beginAfterBody`):
     * the hook cannot see a body that the route streams.
     */
    idempotencyPending?: { id: KeyId; keys: IdempotencyService };
  }
}

export const KEY_HEADER = 'idempotency-key';

/** The answer headers a retry gets back (others, like x-request-id, are the retry's own). */
const KEPT_HEADERS = ['content-type', 'location', 'cache-control'];

/** The request a key was first used with: method, path and query, and the body. */
function requestHash(req: FastifyRequest, fingerprint?: string): string {
  let body: string;
  try {
    body = fingerprint ?? canonicalJson(req.body ?? null);
  } catch {
    body = JSON.stringify(req.body ?? null);
  }
  return createHash('sha256').update(`${req.method}\n${req.url}\n${body}`).digest('hex');
}

/**
 * For a multipart route (it streams its body): called by the route once it has read the
 * body, with a fingerprint of what it read. True when the first answer was replayed (the
 * reply is sent: the route returns `reply` and does nothing more); false when the route goes
 * on (it is the first, or no key was sent). A boolean, not the reply: a reply is thenable,
 * so an async function returning it would hand the caller `undefined` once it is sent.
 */
export async function beginAfterBody(
  req: FastifyRequest,
  reply: FastifyReply,
  fingerprint: string,
): Promise<boolean> {
  const pending = req.idempotencyPending;
  if (!pending) return false;
  req.idempotencyPending = undefined;
  const hash = requestHash(req, fingerprint);
  const begun = await pending.keys.begin(pending.id, hash);
  if (begun.kind === 'replay') {
    replay(reply, begun.answer);
    return true;
  }
  req.idempotency = { id: pending.id, hash };
  return false;
}

/**
 * Whether an answer is kept for the key's retries: every answer the route gave except a
 * server error (5xx: nothing was done; a retry runs again) and the answers that depend on
 * timing rather than on the request (429, and 409 code 10 "retry").
 */
function keeps(status: number, payload: string): boolean {
  if (status >= 500 || status === 429 || status === 408) return false;
  if (status === 409) {
    try {
      return (JSON.parse(payload) as { code?: unknown }).code !== Code.ABORTED;
    } catch {
      return true;
    }
  }
  return true;
}

function replay(reply: FastifyReply, answer: StoredAnswer): FastifyReply {
  void reply.code(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) void reply.header(name, value);
  void reply.header(REPLAYED_HEADER, 'true');
  // A string with its content type is sent as it is: byte for byte the first answer.
  return reply.send(answer.body);
}

/**
 * Where a caller's keys live: its organization and its credential — a person's wallet (all
 * its sessions) or the API key. Another credential of the same organization never gets this
 * one's answer: a replay skips the route's service, and with it every check the service makes
 * of the caller (a grant's ceiling, a role's rules), so a colleague holding less must run
 * its own request (docs/decisions.md, "Idempotency keys belong to a credential").
 */
function scopeOf(auth: AuthContext): string {
  const who = auth.apiKeyId ? `key:${auth.apiKeyId}` : `wallet:${auth.walletId}`;
  return auth.orgId ? `org:${auth.orgId}/${who}` : who;
}

/**
 * `Idempotency-Key` on the routes that declare `config.idempotent`, as hooks of those routes
 * alone (a route without the flag, like execute, runs none of them). After auth and
 * validation (preHandler) the key is checked and taken, or the first answer is replayed; the
 * first request's answer is kept as it is sent (onSend). A request without a credential
 * ignores the header (no scope to keep it in).
 */
export function registerIdempotency(app: App, keys: IdempotencyService): void {
  const preHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    const raw = req.headers[KEY_HEADER];
    if (raw === undefined || !req.auth) return;
    const key = Array.isArray(raw) ? raw.join(',') : raw;
    checkKey(key);
    const auth = req.auth;
    const id: KeyId = {
      scope: scopeOf(auth),
      route: `${req.method} ${req.routeOptions.url ?? ''}`,
      key,
    };
    if (/^multipart\//i.test(req.headers['content-type'] ?? '')) {
      req.idempotencyPending = { id, keys };
      return;
    }
    const hash = requestHash(req);
    const begun = await keys.begin(id, hash);
    if (begun.kind === 'replay') return replay(reply, begun.answer);
    req.idempotency = { id, hash };
  };

  const onSend = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const held = req.idempotency;
    if (!held) return payload;
    req.idempotency = undefined;
    const status = reply.statusCode;
    try {
      if (typeof payload === 'string' && keeps(status, payload)) {
        const headers: Record<string, string> = {};
        for (const name of KEPT_HEADERS) {
          const v = reply.getHeader(name);
          if (v !== undefined) headers[name] = String(v);
        }
        await keys.complete(held.id, held.hash, { status, headers, body: payload });
      } else {
        await keys.release(held.id, held.hash);
      }
    } catch (err) {
      // The answer still goes out; the key stays taken until it is stale (then taken over).
      req.log.warn({ err }, 'the answer of an idempotency key could not be kept');
    }
    return payload;
  };

  // An answer never sent (the client went away first): the key is given back.
  const onResponse = async (req: FastifyRequest) => {
    const held = req.idempotency;
    if (!held) return;
    req.idempotency = undefined;
    await keys.release(held.id, held.hash).catch((err: unknown) => {
      req.log.warn({ err }, 'an idempotency key could not be given back');
    });
  };

  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent !== true) return;
    // The header in the route's OpenAPI operation (and its length checked by the schema).
    const schema = (route.schema ??= {}) as Record<string, unknown>;
    schema.headers = Type.Object({
      [KEY_HEADER]: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: MAX_KEY_LENGTH,
          description:
            'Idempotency-Key: a retry with the same key and the same request within 24 hours is answered with the first answer (Idempotent-Replayed: true); docs/api.md',
        }),
      ),
    });
    route.preHandler = [...[route.preHandler ?? []].flat(), preHandler];
    route.onSend = [...[route.onSend ?? []].flat(), onSend];
    route.onResponse = [...[route.onResponse ?? []].flat(), onResponse];
  });
}
