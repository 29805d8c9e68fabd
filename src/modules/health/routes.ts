import { Type } from 'typebox';
import type { App } from '../../http/app.js';
import type { Db } from '../../db/pool.js';
import { checkReady } from './service.js';

const Status = Type.Object({ status: Type.String() });

/**
 * `/healthz`: the process is alive (a liveness probe; it stays 200 while the database is
 * away, since restarting the process would not bring it back). `/readyz`: the database
 * answers, so requests can be served. Neither counts against rate limits.
 */
export function registerHealthRoutes(app: App, db: Db) {
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
      schema: { tags: ['health'], response: { 200: Status, 503: Status } },
    },
    async (req, reply) => {
      try {
        await checkReady(db);
        return { status: 'ready' };
      } catch (err) {
        req.log.warn({ err }, 'readiness check failed');
        return reply.status(503).send({ status: 'database unavailable' });
      }
    },
  );
}
