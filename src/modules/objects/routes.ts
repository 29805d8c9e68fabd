import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { invalid } from '../../lib/errors.js';
import { ExecuteBody, ExecuteResponse } from '../ebus/schema.js';
import type { ActionName } from './actions/params.js';
import type { EbusService } from '../ebus/service.js';
import { ObjectRecordSchema } from './record.js';
import {
  ListObjectsQuery,
  ObjectIdParams,
  ObjectList,
  PublicObjectList,
  PublicObjectsQuery,
} from './schema.js';
import type { ObjectService } from './service.js';
import { MicroCache } from '../../http/micro-cache.js';

const tags = ['objects'];

/** The REST forms of execute take one action each; another is refused (400 code 3). */
function onlyAction(body: ExecuteBody, name: ActionName, message: string): void {
  if (body.action.name !== name) {
    throw invalid(message, [{ field: 'action.name', reason: `must be ${name}` }]);
  }
}

/**
 * Every /objects route. Reads go to the object service; minting and updating are signed
 * actions, so POST /objects and PUT /objects/{id} hand them to the event bus's execute.
 */
export function registerObjectRoutes(
  app: App,
  objects: ObjectService,
  ebus: EbusService,
  publicCacheMs: number,
) {
  const publicCache = new MicroCache(publicCacheMs);
  app.post(
    '/objects',
    {
      config: { permission: 'objects.create' },
      schema: {
        tags,
        summary: 'Mint an object: a signed mint action (answers like /ebus/execute)',
        body: ExecuteBody,
        response: { 200: ExecuteResponse },
      },
    },
    async (req) => {
      onlyAction(req.body, 'mint', 'POST /objects takes a mint action');
      return ebus.execute(authOf(req), req.body);
    },
  );

  app.put(
    '/objects/:id',
    {
      config: { permission: 'objects.update' },
      schema: {
        tags,
        summary: 'Update an object: a signed update action (answers like /ebus/execute)',
        params: ObjectIdParams,
        body: ExecuteBody,
        response: { 200: ExecuteResponse },
      },
    },
    async (req) => {
      onlyAction(req.body, 'update', 'PUT /objects/{id} takes an update action');
      if ((req.body.action.params as { object_id?: unknown }).object_id !== req.params.id) {
        throw invalid('action.params.object_id must equal the object id in the path', [
          { field: 'action.params.object_id', reason: 'must equal the path id' },
        ]);
      }
      return ebus.execute(authOf(req), req.body);
    },
  );

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
