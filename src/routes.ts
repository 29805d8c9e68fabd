import type { Container } from './container.js';
import type { App } from './http/app.js';
import { registerHealthRoutes } from './modules/health/routes.js';
import { registerJwksRoute } from './modules/auth/jwks-routes.js';
import { registerAuthRoutes } from './modules/auth/routes.js';
import { registerConnectRoutes } from './modules/auth/connect-routes.js';
import { registerAuthWalletRoutes } from './modules/auth/wallet-routes.js';
import { registerWalletRoutes } from './modules/wallets/routes.js';
import { registerBalanceRoutes } from './modules/balance/routes.js';
import { registerDepositRoutes } from './modules/deposits/routes.js';
import { registerMemberRoutes } from './modules/members/routes.js';
import { registerOrganizationRoutes } from './modules/organizations/routes.js';
import { registerSupportRoutes } from './modules/support/routes.js';
import { registerIndexerRoutes } from './modules/indexer/routes.js';
import { registerObjectRoutes } from './modules/objects/routes.js';
import { registerStorageRoutes } from './modules/storage/routes.js';
import { registerTemplateRoutes } from './modules/templates/routes.js';
import { registerEbusRoutes } from './modules/ebus/routes.js';
import { registerObjectActionRoutes } from './modules/ebus/object-routes.js';
import { registerApiKeyRoutes } from './modules/api-keys/routes.js';
import { registerWebhookRoutes } from './modules/webhooks/routes.js';
import { registerBatchRoutes } from './modules/batches/routes.js';
import { registerPolicyRoutes } from './modules/policies/routes.js';
import { registerLogRoutes } from './modules/log/routes.js';
import { registerIdempotency } from './modules/idempotency/routes.js';

/** Every feature's routes, registered on the shared app. */
export function registerRoutes(app: App, c: Container) {
  // First: its hooks apply to the routes that declare `config.idempotent`.
  registerIdempotency(app, c.idempotency);
  registerHealthRoutes(app, c.readiness);
  registerJwksRoute(app, c.tokens);
  registerAuthRoutes(app, c.identity);
  registerAuthWalletRoutes(app, c.identity);
  registerWalletRoutes(app, c.wallets);
  registerConnectRoutes(app, c.identity);
  registerOrganizationRoutes(app, c.organizations);
  registerMemberRoutes(app, c.members);
  registerBalanceRoutes(app, c.balance);
  registerDepositRoutes(app, c.deposits);
  registerSupportRoutes(app, c.support);
  registerTemplateRoutes(app, c.templates);
  registerObjectActionRoutes(app, c.ebus.service);
  registerObjectRoutes(app, c.objects, c.publicList);
  registerStorageRoutes(app, c.storage, {
    ...c.config.storage,
    stallTimeoutMs: c.config.http.idleTimeoutMs,
  });
  registerIndexerRoutes(app, c.indexer);
  registerEbusRoutes(app, c.ebus.service);
  registerApiKeyRoutes(app, c.apiKeys);
  registerWebhookRoutes(app, c.webhooks.service, c.webhooks.log);
  registerBatchRoutes(app, c.batches.explorer);
  registerPolicyRoutes(app, c.policies);
  registerLogRoutes(app, c.log);
}
