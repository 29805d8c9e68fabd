import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import {
  CreatePolicyInput,
  Empty,
  Policy,
  PolicyLimitsInput,
  PolicyList,
  PolicyParams,
} from './schema.js';
import type { PolicyService } from './service.js';

/** Spend policies (docs/policies.md): a person's token or an API key, each bounded as a grant. */
export function registerPolicyRoutes(app: App, policies: PolicyService) {
  app.post(
    '/policies',
    {
      config: { permission: 'policies.create', grants: 'policy' },
      schema: {
        tags: ['policies'],
        summary: 'CreatePolicy',
        body: CreatePolicyInput,
        response: { 200: Policy },
      },
    },
    async (req) => policies.create(authOf(req), req.body),
  );

  app.get(
    '/policies',
    {
      config: { permission: 'policies.read' },
      schema: { tags: ['policies'], summary: 'ListPolicies', response: { 200: PolicyList } },
    },
    async (req) => policies.list(authOf(req)),
  );

  app.get(
    '/policies/:id',
    {
      config: { permission: 'policies.read' },
      schema: {
        tags: ['policies'],
        summary: 'GetPolicy',
        params: PolicyParams,
        response: { 200: Policy },
      },
    },
    async (req) => policies.get(authOf(req), req.params.id),
  );

  app.put(
    '/policies/:id',
    {
      config: { permission: 'policies.update' },
      schema: {
        tags: ['policies'],
        summary: 'ReplacePolicy',
        params: PolicyParams,
        body: PolicyLimitsInput,
        response: { 200: Policy },
      },
    },
    async (req) => policies.replace(authOf(req), req.params.id, req.body),
  );

  app.delete(
    '/policies/:id',
    {
      config: { permission: 'policies.delete' },
      schema: {
        tags: ['policies'],
        summary: 'DeletePolicy',
        params: PolicyParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await policies.delete(authOf(req), req.params.id);
      return {};
    },
  );
}
