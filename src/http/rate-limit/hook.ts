import type { FastifyReply, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../../lib/errors.js';
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
     * Overrides the group derived from the route (spec §8); `none` for the health routes,
     * which probes call often and which must answer even when a caller is limited.
     */
    rateLimit?: GroupName | 'none';
  }
}

function subjectOf(req: FastifyRequest, group: Group): string {
  const auth = req.auth;
  if (group.per === 'organization' && auth?.orgId) return `org:${auth.orgId}`;
  if (auth?.apiKeyId) return `key:${auth.apiKeyId}`;
  if (auth) return `wal:${auth.walletId}`;
  return `ip:${req.ip}`;
}

function setHeaders(reply: FastifyReply, d: Decision) {
  void reply.header('x-ratelimit-limit', String(d.limit));
  void reply.header('x-ratelimit-remaining', String(d.remaining));
  void reply.header('x-ratelimit-reset', String(d.resetAt));
}

/**
 * Rate limits per API key (spec §8), per signed-in wallet, or per client address for
 * anonymous calls; the event bus group is per organization and counts actions, so a batch
 * of 100 costs 100. Runs after authentication; the event bus check waits for the body.
 */
export function registerRateLimits(app: App, opts: RateLimitOptions) {
  const groups = buildGroups(opts.defaults);
  const anonymousDefault: Group = {
    ...groups.default,
    rules: [
      { limit: opts.anonymous.perMinute, windowMs: 60_000 },
      { limit: opts.anonymous.perSecond, windowMs: 1_000 },
    ],
  };

  const groupFor = (req: FastifyRequest): Group | null => {
    const url = req.routeOptions.url;
    if (url === undefined) return null;
    const name = req.routeOptions.config.rateLimit ?? groupOf(req.method, url);
    if (name === 'none') return null;
    if (name === 'default' && !req.auth) return anonymousDefault;
    return groups[name];
  };

  const enforce = async (req: FastifyRequest, reply: FastifyReply, group: Group, cost: number) => {
    const d = await opts.limiter.check(group, subjectOf(req, group), cost);
    setHeaders(reply, d);
    if (!d.allowed) throw tooManyRequests('rate limit exceeded; retry later', d.retryAfter);
  };

  app.addHook('onRequest', async (req, reply) => {
    const group = groupFor(req);
    if (!group || group.name === 'ebus') return;
    await enforce(req, reply, group, 1);
  });

  // Answers given before the caller was known (no or a bad credential, an unknown route)
  // count against the client address too, so they carry the headers like every response.
  app.addHook('onSend', async (req, reply, payload) => {
    if (reply.hasHeader('x-ratelimit-limit')) return payload;
    if (req.routeOptions.config.rateLimit === 'none') return payload;
    const d = await opts.limiter.check(anonymousDefault, `ip:${req.ip}`, 1);
    setHeaders(reply, d);
    return payload;
  });

  app.addHook('preHandler', async (req, reply) => {
    const group = groupFor(req);
    if (!group || group.name !== 'ebus') return;
    const body = req.body as { actions?: unknown[] } | undefined;
    const cost = Array.isArray(body?.actions) ? Math.max(1, body.actions.length) : 1;
    await enforce(req, reply, group, cost);
  });
}
