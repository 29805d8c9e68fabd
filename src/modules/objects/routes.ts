import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { ObjectRecordSchema } from './record.js';
import {
  ListObjectsQuery,
  ObjectIdParams,
  ObjectList,
  PublicObjectList,
  PublicObjectsQuery,
} from './schema.js';
import type { ObjectService } from './service.js';
import type { MicroCache } from '../../http/micro-cache.js';

const tags = ['objects'];

/**
 * The /objects reads. Minting and updating are signed actions: POST /objects and
 * PUT /objects/{id} are the event bus's routes (ebus/object-routes.ts).
 */
export function registerObjectRoutes(app: App, objects: ObjectService, publicCache: MicroCache) {
  app.get(
    '/objects',
    {
      config: { permission: 'objects.read' },
      schema: {
        tags,
        summary: "List the organization's objects",
        querystring: ListObjectsQuery,
        response: { 200: ObjectList },
      },
    },
    async (req) => {
      const page = await objects.list(authOf(req), req.query);
      return { objects: page.items, next: page.next, has_more: page.has_more };
    },
  );

  app.get(
    '/objects/:id',
    {
      config: { permission: 'objects.read' },
      schema: {
        tags,
        summary: 'Get an object',
        params: ObjectIdParams,
        response: { 200: ObjectRecordSchema },
      },
    },
    async (req) => objects.get(authOf(req), req.params.id),
  );

  app.get(
    '/public/objects',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'List public objects',
        querystring: PublicObjectsQuery,
        response: { 200: PublicObjectList },
      },
    },
    // A string is sent as it is: the cache holds bytes already serialised by this schema.
    async (req, reply) =>
      reply.send(
        (await publicCache.serve(req, reply, () =>
          objects.listPublic(req.query),
        )) as unknown as PublicObjectList,
      ),
  );
}
