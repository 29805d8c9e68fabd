import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { answerExecuted } from '../../http/idempotency/replayed.js';
import { invalid } from '../../lib/errors.js';
import { ObjectIdParams, type ActionName } from '../objects/index.js';
import { ExecuteBody, ExecuteResponse } from './schema.js';
import type { EbusService } from './service.js';

const tags = ['objects'];

/** The REST forms of execute take one action each; another is refused (400 code 3). */
function onlyAction(body: ExecuteBody, name: ActionName, message: string): void {
  if (body.action.name !== name) {
    throw invalid(message, [{ field: 'action.name', reason: `must be ${name}` }]);
  }
}

/**
 * The REST forms of execute for objects: POST /objects (a mint) and PUT /objects/{id} (an
 * update of the path's object). They are signed actions, so they live with the event bus
 * and call its execute; the objects module serves the reads.
 */
export function registerObjectActionRoutes(app: App, ebus: EbusService) {
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
    async (req, reply) => {
      onlyAction(req.body, 'mint', 'POST /objects takes a mint action');
      return answerExecuted(reply, await ebus.execute(authOf(req), req.body));
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
    async (req, reply) => {
      onlyAction(req.body, 'update', 'PUT /objects/{id} takes an update action');
      if ((req.body.action.params as { object_id?: unknown }).object_id !== req.params.id) {
        throw invalid('action.params.object_id must equal the object id in the path', [
          { field: 'action.params.object_id', reason: 'must equal the path id' },
        ]);
      }
      return answerExecuted(reply, await ebus.execute(authOf(req), req.body));
    },
  );
}
