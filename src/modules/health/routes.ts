import { Type } from 'typebox';
import type { App } from '../../http/app.js';
import type { Db } from '../../db/pool.js';
import { pingDatabase } from './repo.js';

const Status = Type.Object({ status: Type.String() });

export function registerHealthRoutes(app: App, db: Db) {
  app.get(
    '/healthz',
    { config: { auth: 'none' }, schema: { tags: ['health'], response: { 200: Status } } },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'none' },
      schema: { tags: ['health'], response: { 200: Status, 503: Status } },
    },
    async (req, reply) => {
      try {
        await pingDatabase(db);
        return { status: 'ready' };
      } catch (err) {
        req.log.warn({ err }, 'readiness check failed');
        return reply.status(503).send({ status: 'database unavailable' });
      }
    },
  );
}
