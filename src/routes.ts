import type { Container } from './container.js';
import type { App } from './http/app.js';
import { registerHealthRoutes } from './modules/health/routes.js';
import { registerJwksRoute } from './modules/auth/jwks-route.js';
import { registerAuthRoutes } from './modules/auth/routes.js';
import { registerConnectRoutes } from './modules/wallets/connect-routes.js';
import { registerWalletRoutes } from './modules/wallets/routes.js';

/** Every feature's routes, registered on the shared app. */
export function registerRoutes(app: App, c: Container) {
  registerHealthRoutes(app, c.db);
  registerJwksRoute(app, c.tokens);
  registerAuthRoutes(app, c.identity);
  registerWalletRoutes(app, c.identity);
  registerConnectRoutes(app, c.identity);
}
