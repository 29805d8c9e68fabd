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
} as const;
