import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMember } from '../helpers/fixtures.js';
import { signUp, uniqueEmail } from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';
import { crudOf } from '../helpers/api-keys.js';

const svc = useTestService();
beforeAll(async () => {
  // Refuses every insert into a table, quoting the whole row (hashes, emails) in the
  // message and the detail, as a check constraint's "Failing row contains (…)" would.
  await svc.container.db.execute(sql`
    CREATE FUNCTION test_refuse_row() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'refused row %', row_to_json(NEW)::text
        USING DETAIL = row_to_json(NEW)::text;
    END $$`);
});

async function refuseInsertsInto(table: 'wallets' | 'api_keys' | 'sessions') {
  await svc.container.db.execute(
    sql.raw(`CREATE TRIGGER test_refuse_${table} BEFORE INSERT ON ${table}
      FOR EACH ROW EXECUTE FUNCTION test_refuse_row()`),
  );
}

async function allowInsertsInto(table: 'wallets' | 'api_keys' | 'sessions') {
  await svc.container.db.execute(sql.raw(`DROP TRIGGER test_refuse_${table} ON ${table}`));
}

/** The log lines written while `fn` ran, as text, and the errors among them. */
async function logOf(fn: () => Promise<void>) {
  const from = svc.logs.length;
  await fn();
  const lines = svc.logs.slice(from);
  const errors = lines.filter((l) => l.level === 50).map((l) => l.err as Record<string, unknown>);
  return { text: JSON.stringify(lines), errors };
}

/** What no log line may carry: password hashes, secrets and their SHA-256 hex, tokens. */
function expectNoSecretsIn(text: string, extra: string[]) {
  expect(text).not.toMatch(/\$argon2/);
  expect(text).not.toMatch(/onsk_/);
  expect(text).not.toMatch(/[0-9a-f]{64}/);
  expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+/); // a JWT
  for (const s of extra) expect(text).not.toContain(s);
}

describe('logs of a failing write', () => {
  it('name the statement and the error code, never the email, password or its hash', async () => {
    const email = uniqueEmail('private');
    const password = 'a very private passphrase';
    await refuseInsertsInto('wallets');
    const { text, errors } = await logOf(async () => {
      const res = await svc.app.inject({
        method: 'POST',
        url: '/organizations/wallets',
        payload: { email, password },
      });
      expect([res.statusCode, res.json().code]).toEqual([500, 13]);
      expect(res.body).not.toContain(email);
    });
    await allowInsertsInto('wallets');
    expect(errors).toContainEqual(
      expect.objectContaining({
        statement: expect.stringMatching(/^insert wallets #[0-9a-f]{8}$/),
        code: 'P0001',
      }),
    );
    expectNoSecretsIn(text, [email, email.split('@')[0]!, password]);
  });

  it('carry no API key secret or its hash when storing a key fails', async () => {
    const owner = await createMember(svc, { role: 'owner' });
    await refuseInsertsInto('api_keys');
    const { text, errors } = await logOf(async () => {
      const res = await svc.app.inject({
        method: 'POST',
        url: '/api-keys',
        headers: owner.headers,
        payload: { name: 'k', permissions: crudOf(['objects.read']) },
      });
      expect(res.statusCode).toBe(500);
    });
    await allowInsertsInto('api_keys');
    expect(errors).toContainEqual(
      expect.objectContaining({ statement: expect.stringMatching(/^insert api_keys /) }),
    );
    expectNoSecretsIn(text, [owner.accessToken, owner.email]);
  });

  it('carry no refresh token hash, email or password when starting a session fails', async () => {
    const account = await signUp(svc);
    await refuseInsertsInto('sessions');
    const { text, errors } = await logOf(async () => {
      const res = await svc.app.inject({
        method: 'POST',
        url: '/auth/login',
        payload: { email: account.email, password: account.password },
      });
      expect(res.statusCode).toBe(500);
    });
    await allowInsertsInto('sessions');
    expect(errors).toContainEqual(
      expect.objectContaining({ statement: expect.stringMatching(/^insert sessions /) }),
    );
    expectNoSecretsIn(text, [account.email, account.password, account.refresh_token]);
  });
});
