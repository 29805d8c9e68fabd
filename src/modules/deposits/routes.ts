import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import type { DepositService } from './service.js';
import { DepositList, ListDepositsQuery } from './schema.js';

export function registerDepositRoutes(app: App, svc: DepositService) {
  app.get(
    '/payments/deposits',
    {
      config: { permission: 'deposits.read' },
      schema: {
        tags: ['deposits'],
        summary: "ListDeposits: the deposits into the caller's organization",
        querystring: ListDepositsQuery,
        response: { 200: DepositList },
      },
    },
    async (req) => {
      const page = await svc.list(authOf(req), req.query);
      return { deposits: page.items, next: page.next, has_more: page.has_more };
    },
  );
}
