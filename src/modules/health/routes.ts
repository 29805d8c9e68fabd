import { Type } from 'typebox';
import type { App } from '../../http/app.js';
import type { Db } from '../../db/pool.js';
import { pingDatabase } from './repo.js';

const Status = Type.Object({ status: Type.String() });

/** A readiness probe answers within this even when the database does not (ms). */
const READY_WITHIN_MS = 2000;

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('readiness check timed out')), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

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
        await within(READY_WITHIN_MS, pingDatabase(db));
        return { status: 'ready' };
      } catch (err) {
        req.log.warn({ err }, 'readiness check failed');
        return reply.status(503).send({ status: 'database unavailable' });
      }
    },
  );
}
