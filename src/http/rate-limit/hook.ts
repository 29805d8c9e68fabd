import type { FastifyReply, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../../lib/errors.js';
import { clientSubject } from '../../lib/client-network.js';
import type { RefusalLimit } from '../auth.js';
import type { App } from '../types.js';
import { buildGroups, groupOf, type DefaultLimits, type Group, type GroupName } from './groups.js';
import type { Decision, RateLimiter } from './limiter.js';

export interface RateLimitOptions {
  limiter: RateLimiter;
  defaults: DefaultLimits;
  /** Limits for callers with no credential, per client address. */
  anonymous: DefaultLimits;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Overrides the group derived from the route (docs/api.md, "Rate limits"); `none` for the
     * health routes, which probes call often and which must answer even when a caller is limited.
     */
    rateLimit?: GroupName | 'none';
  }
  interface FastifyInstance {
    /**
     * Counts a wallet the request is about to make in the `signup` group of its client, and
     * refuses (429 code 8) over it; absent when rate limits are off. For the routes that make
     * a wallet only on a first sign-in (src/http/client-context.ts `clientOf`).
     */
    signUpAdmission?: (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

/** The allowance of callers with no (valid) credential, per client address. */
function anonymousGroup(opts: RateLimitOptions): Group {
  return {
    ...buildGroups(opts.defaults).default,
    rules: [
      { limit: opts.anonymous.perMinute, windowMs: 60_000 },
      { limit: opts.anonymous.perSecond, windowMs: 1_000 },
    ],
  };
}

/**
 * The limit on requests refused for their credential (src/http/auth.ts `RefusalLimit`): each
 * counts against its client address in the anonymous group, and once that address is over
 * it the answer is 429 rather than 401. Counted here, such an answer carries the headers and
 * is not counted again when sent.
 */
export function refusalLimit(opts: RateLimitOptions): RefusalLimit {
  const group = anonymousGroup(opts);
  return async (req, reply) => {
    const subject = clientSubject(req.ip);
    const d =
      opts.limiter.checkNow(group, subject, 1) ?? (await opts.limiter.check(group, subject, 1));
    setHeaders(reply, d);
    return d.allowed ? null : tooManyRequests('rate limit exceeded; retry later', d.retryAfter);
  };
}

function subjectOf(req: FastifyRequest, group: Group): string {
  const auth = req.auth;
  if (group.per === 'organization' && auth?.orgId) {
    // A route that names an organization (invitations) counts in it only for a caller acting
    // there: anyone else's calls, refused later or made from another organization's context,
    // count as that caller's, so nobody can spend an organization's allowance from outside.
    const named = (req.params as { organizationId?: unknown } | undefined)?.organizationId;
    if (named === undefined || named === auth.orgId) return `org:${auth.orgId}`;
  }
  if (auth?.apiKeyId) return `key:${auth.apiKeyId}`;
  if (auth) return `wal:${auth.walletId}`;
  return clientSubject(req.ip);
}

function setHeaders(reply: FastifyReply, d: Decision) {
  void reply.header('x-ratelimit-limit', String(d.limit));
  void reply.header('x-ratelimit-remaining', String(d.remaining));
  void reply.header('x-ratelimit-reset', String(d.resetAt));
}

/**
 * Rate limits per API key (docs/api.md, "Rate limits"), per signed-in wallet, or per client address
 * for anonymous calls; the event bus group (which counts actions, so a batch of 100 costs 100)
 * and webhook management are per organization. Runs after authentication; the event bus check
 * waits for the body.
 */
export function registerRateLimits(app: App, opts: RateLimitOptions) {
  const groups = buildGroups(opts.defaults);
  const anonymousDefault = anonymousGroup(opts);

  const groupFor = (req: FastifyRequest): Group | null => {
    const url = req.routeOptions.url;
    if (url === undefined) return null;
    const name = req.routeOptions.config.rateLimit ?? groupOf(req.method, url);
    if (name === 'none') return null;
    if (name === 'default' && !req.auth) return anonymousDefault;
    return groups[name];
  };

  const answer = (reply: FastifyReply, d: Decision, done: (err?: Error) => void) => {
    setHeaders(reply, d);
    done(d.allowed ? undefined : tooManyRequests('rate limit exceeded; retry later', d.retryAfter));
  };

  // Callback hooks, and no promise at all when the store counts in memory: the limiter runs
  // on every request, so its cost is per request (docs/performance.md).
  const enforce = (
    req: FastifyRequest,
    reply: FastifyReply,
    group: Group,
    cost: number,
    done: (err?: Error) => void,
  ) => {
    const subject = subjectOf(req, group);
    const now = opts.limiter.checkNow(group, subject, cost);
    if (now) return answer(reply, now, done);
    opts.limiter.check(group, subject, cost).then((d) => answer(reply, d, done), done);
  };

  // A first sign-in that makes a wallet counts as a sign-up only once the service knows it
  // makes one (docs/api.md, "Rate limits"): its own headers replace the anonymous ones.
  app.decorate('signUpAdmission', async (req: FastifyRequest, reply: FastifyReply) => {
    const d = await opts.limiter.check(groups.signup, subjectOf(req, groups.signup), 1);
    setHeaders(reply, d);
    if (!d.allowed) throw tooManyRequests('too many sign-ups; retry later', d.retryAfter);
  });

  app.addHook('onRequest', (req, reply, done) => {
    const group = groupFor(req);
    if (!group || group.name === 'ebus') return done();
    enforce(req, reply, group, 1, done);
  });

  // Answers given before the caller was known (no or a bad credential, an unknown route)
  // count against the client address too, so they carry the headers like every response.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (reply.hasHeader('x-ratelimit-limit') || req.routeOptions.config.rateLimit === 'none') {
      return done(null, payload);
    }
    const subject = clientSubject(req.ip);
    const now = opts.limiter.checkNow(anonymousDefault, subject, 1);
    if (now) {
      setHeaders(reply, now);
      return done(null, payload);
    }
    opts.limiter.check(anonymousDefault, subject, 1).then(
      (d) => {
        setHeaders(reply, d);
        done(null, payload);
      },
      (err: Error) => done(err),
    );
  });

  // The event bus check waits for the body (it counts actions), so it is a preHandler, put
  // on the event bus routes alone rather than run for every request.
  const ebusCheck = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const body = req.body as { actions?: unknown[] } | undefined;
    const cost = Array.isArray(body?.actions) ? Math.max(1, body.actions.length) : 1;
    enforce(req, reply, groups.ebus, cost, done);
  };
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    const name =
      route.config?.rateLimit ?? (methods.length === 1 ? groupOf(methods[0]!, route.url) : null);
    if (name !== 'ebus') return;
    route.preHandler = [...[route.preHandler ?? []].flat(), ebusCheck];
  });
}
