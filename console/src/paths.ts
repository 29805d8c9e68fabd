/** Every page's address. The service serves the console under BASE (src/http/console.ts). */
export const BASE = '/console';

export const paths = {
  home: `${BASE}/`,
  signIn: `${BASE}/sign-in`,
  signUp: `${BASE}/sign-up`,
  sessions: `${BASE}/sessions`,
  organization: `${BASE}/organization`,
  members: `${BASE}/members`,
  balance: `${BASE}/balance`,
  apiKeys: `${BASE}/api-keys`,
  policies: `${BASE}/policies`,
  webhooks: `${BASE}/webhooks`,
  webhook: `${BASE}/webhooks/:id`,
  templates: `${BASE}/templates`,
  objects: `${BASE}/objects`,
  object: `${BASE}/objects/:id`,
  invitation: `${BASE}/invitation`,
  explorer: `${BASE}/explorer`,
  explorerBatch: `${BASE}/explorer/batches/:id`,
  explorerObject: `${BASE}/explorer/objects/:id`,
} as const;

/** The address of one item's page (`paths.webhook` etc. with its id). */
export const pathOf = (pattern: string, id: string): string =>
  pattern.replace(':id', encodeURIComponent(id));
