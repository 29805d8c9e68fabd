import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import {
  ApiKeyList,
  ApiKeyParams,
  CreateApiKeyInput,
  CreatedApiKey,
  Empty,
  ListApiKeysQuery,
} from './schema.js';
import type { ApiKeyService } from './service.js';

/** API key management takes a person's bearer token only (docs/api.md, "API keys"). */
export function registerApiKeyRoutes(app: App, keys: ApiKeyService) {
  app.post(
    '/api-keys',
    {
      config: {
        auth: 'bearer',
        permission: 'api-keys.create',
        grants: 'api-key',
        idempotent: true,
      },
      schema: {
        tags: ['api-keys'],
        summary: 'CreateApiKey',
        body: CreateApiKeyInput,
        response: { 200: CreatedApiKey },
      },
    },
    async (req) => keys.create(authOf(req), req.body),
  );

  app.get(
    '/api-keys',
    {
      config: { auth: 'bearer', permission: 'api-keys.read' },
      schema: {
        tags: ['api-keys'],
        summary: 'ListApiKeys',
        querystring: ListApiKeysQuery,
        response: { 200: ApiKeyList },
      },
    },
    async (req) => keys.list(authOf(req), req.query),
  );

  app.delete(
    '/api-keys/:id',
    {
      config: { auth: 'bearer', permission: 'api-keys.delete' },
      schema: {
        tags: ['api-keys'],
        summary: 'DeleteApiKey',
        params: ApiKeyParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await keys.delete(authOf(req), req.params.id);
      return {};
    },
  );
}
