import type { Container } from './container.js';
import type { App } from './http/app.js';
import { registerHealthRoutes } from './modules/health/routes.js';
import { registerJwksRoute } from './modules/auth/jwks-route.js';
import { registerApiKeyRoutes } from './modules/api-keys/routes.js';

/** Every feature's routes, registered on the shared app. */
export function registerRoutes(app: App, c: Container) {
  registerHealthRoutes(app, c.db);
  registerJwksRoute(app, c.tokens);
  registerApiKeyRoutes(app, c.apiKeys);
}
