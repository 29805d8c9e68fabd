import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { readOutbox } from '../../src/modules/notify/sender.js';
import type { TestService } from './service.js';

export interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
  wallet: { id: string; address: string; organization_id: string | null };
}

export const bearer = (t: { access_token: string }) => ({
  authorization: `Bearer ${t.access_token}`,
});

let counter = 0;
/** A fresh, unique email for one test. */
export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}${counter}.${Date.now().toString(36)}@example.test`;
}

/** A standalone account through `POST /organizations/wallets`. */
export async function signUp(
  svc: TestService,
  body: { email?: string; phone_number?: string; password?: string; name?: string } = {},
): Promise<Tokens & { email: string; password: string }> {
  const email = body.email ?? (body.phone_number ? undefined : uniqueEmail());
  const password = body.password ?? 'correct horse battery';
  const res = await svc.app.inject({
    method: 'POST',
    url: '/organizations/wallets',
    payload: { ...body, email, password },
  });
  expect(res.statusCode, res.body).toBe(200);
  return { ...res.json<Tokens>(), email: email ?? '', password };
}

/** The newest code the default sender stored for an address. */
export async function lastCode(svc: TestService, to: string): Promise<string> {
  const [msg] = await readOutbox(svc.container.db, to, 1);
  const m = msg && /\b(\d{6})\b/.exec(msg.body);
  if (!m) throw new Error(`no code in the outbox for ${to}`);
  return m[1]!;
}

export async function outboxCount(svc: TestService, to: string): Promise<number> {
  return (await readOutbox(svc.container.db, to, 100)).length;
}

/** Asserts that nothing secret leaves in a response body. */
export function expectNoSecrets(body: string, extra: string[] = []) {
  expect(body).not.toMatch(/\$argon2/);
  expect(body).not.toMatch(/password_hash|code_hash|refresh_token_hash/);
  for (const s of extra) expect(body).not.toContain(s);
}

export async function sessionEnded(svc: TestService, sessionId: string): Promise<boolean> {
  const { rows } = await svc.container.db.execute<{ ended_at: Date | null }>(
    sql`SELECT ended_at FROM sessions WHERE id = ${sessionId}`,
  );
  return rows[0]?.ended_at != null;
}

/** The session id inside an access token (claims are not secret). */
export function sessionIdOf(accessToken: string): string {
  const payload = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as {
    sid: string;
  };
  return payload.sid;
}

/** base64url with the `=` padding some clients add. */
export function pad(value: string): string {
  return value + '='.repeat((4 - (value.length % 4)) % 4);
}

/** A WebAuthn credential JSON with `id`, `rawId` and every text field of `response` padded. */
export function padCredential<T extends { id: string; rawId: string; response: object }>(
  credential: T,
): T {
  const response: Record<string, unknown> = { ...credential.response };
  for (const [key, value] of Object.entries(response)) {
    if (typeof value === 'string') response[key] = pad(value);
  }
  return { ...credential, id: pad(credential.id), rawId: pad(credential.rawId), response };
}
