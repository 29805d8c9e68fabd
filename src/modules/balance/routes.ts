import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { OrganizationPath } from '../organizations/index.js';
import type { BalanceService } from './service.js';
import { Balance, BalanceHistory, BalanceHistoryQuery, LowBalanceInput } from './schema.js';

const tags = ['balance'];

/** Balance routes; the service checks `balance.read` against the caller's role there. */
export function registerBalanceRoutes(app: App, svc: BalanceService) {
  app.get(
    '/organizations/:organizationId/balance',
    {
      config: { permission: 'authenticated' },
      schema: {
        tags,
        summary: 'GetOrganizationBalance (needs balance.read there)',
        params: OrganizationPath,
        response: { 200: Balance },
      },
    },
    async (req) => svc.get(authOf(req), req.params.organizationId),
  );

  app.put(
    '/organizations/:organizationId/balance/low-threshold',
    {
      config: { permission: 'authenticated' },
      schema: {
        tags,
        summary:
          'SetLowBalanceThreshold (needs balance.update there): owners and admins are told by email when the balance falls below it',
        params: OrganizationPath,
        body: LowBalanceInput,
        response: { 200: Balance },
      },
    },
    async (req) => svc.setLowBalance(authOf(req), req.params.organizationId, req.body),
  );

  app.get(
    '/organizations/:organizationId/balance/history',
    {
      config: { permission: 'authenticated' },
      schema: {
        tags,
        summary: 'GetOrganizationBalanceHistory: credits, debits and closing balance per bucket',
        params: OrganizationPath,
        querystring: BalanceHistoryQuery,
        response: { 200: BalanceHistory },
      },
    },
    async (req) => {
      const page = await svc.history(authOf(req), req.params.organizationId, req.query);
      return { history: page.items, next: page.next, has_more: page.has_more };
    },
  );
}
