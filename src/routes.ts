import type { Container } from './container.js';
import type { App } from './http/app.js';
import { registerHealthRoutes } from './modules/health/routes.js';
import { registerJwksRoute } from './modules/auth/jwks-route.js';
import { registerIndexerRoutes } from './modules/indexer/routes.js';
import { registerObjectRoutes } from './modules/objects/routes.js';
import { registerStorageRoutes } from './modules/storage/routes.js';
import { registerTemplateRoutes } from './modules/templates/routes.js';

/** Every feature's routes, registered on the shared app. */
export function registerRoutes(app: App, c: Container) {
  registerHealthRoutes(app, c.db);
  registerJwksRoute(app, c.tokens);
  registerTemplateRoutes(app, c.templates);
  registerObjectRoutes(app, c.objects);
  registerStorageRoutes(app, c.storage, c.config.storage.uploadLimitBytes);
  registerIndexerRoutes(app, c.indexer);
}
