import { Type } from 'typebox';
import type { App } from '../../http/app.js';
import type { Readiness } from './service.js';

const Status = Type.Object({ status: Type.String() });
const State = Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]);
const Ready = Type.Object({
  status: Type.Union([
    Type.Literal('ready'),
    Type.Literal('degraded'),
    Type.Literal('unavailable'),
  ]),
  checks: Type.Object({
    database: State,
    redis: Type.Optional(State),
    chain: Type.Optional(State),
  }),
});

/**
 * `/healthz`: the process is alive (a liveness probe; it stays 200 while a dependency is
 * away, since restarting the process would not bring it back). `/readyz`: 200 while
 * PostgreSQL answers (`ready`, or `degraded` naming an optional dependency that does not:
 * Redis, the chain), 503 `unavailable` when it does not (docs/self-hosting.md, "Health and
 * readiness"). Neither counts against rate limits.
 */
export function registerHealthRoutes(app: App, readiness: Readiness) {
  app.get(
    '/healthz',
    {
      config: { auth: 'none', rateLimit: 'none' },
      schema: { tags: ['health'], response: { 200: Status } },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'none', rateLimit: 'none' },
      schema: { tags: ['health'], response: { 200: Ready, 503: Ready } },
    },
    async (req, reply) => {
      const report = await readiness.check();
      if (report.status === 'unavailable') {
        req.log.warn({ checks: report.checks }, 'readiness check failed');
        return reply.status(503).send(report);
      }
      if (report.status === 'degraded') req.log.debug({ checks: report.checks }, 'degraded');
      return report;
    },
  );
}
