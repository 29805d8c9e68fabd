import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { createStandaloneAccount } from '../helpers/orgs.js';
import { useTestService } from '../helpers/harness.js';
import { uniqueEmail } from '../helpers/identity.js';

/**
 * The limits that keep free organizations and invitations from making the service spend what
 * others need (docs/members.md, "Limits on invitations"; docs/organizations.md, "How many"),
 * with small settings so a test reaches them quickly.
 */
const PER_RECIPIENT = 3;
const PENDING = 4;
const PER_WALLET = 3;
const svc = useTestService({
  env: {
    INVITATIONS_PER_RECIPIENT_PER_HOUR: String(PER_RECIPIENT),
    INVITATIONS_PENDING_MAX: String(PENDING),
    ORGANIZATIONS_PER_WALLET: String(PER_WALLET),
  },
});
const HOUR = 3_600_000;

const invite = (by: TestMember, email: string) =>
  svc.app.inject({
    method: 'POST',
    url: `/organizations/${by.orgId}/members`,
    headers: by.headers,
    payload: { email, role: 'member' },
  });
const withdraw = (by: TestMember, memberId: string) =>
  svc.app.inject({
    method: 'DELETE',
    url: `/organizations/${by.orgId}/members/${memberId}`,
    headers: by.headers,
  });
const mailsTo = async (email: string) => {
  const { rows } = await svc.container.db.execute<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM outbox_messages WHERE recipient = ${email}`,
  );
  return rows[0]!.n;
};
const invitationsOf = async (email: string) => {
  const { rows } = await svc.container.db.execute<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM members WHERE email = ${email} AND wallet_id IS NULL`,
  );
  return rows[0]!.n;
};

describe('invitation emails per recipient, from every organization together', () => {
  // Two organizations take turns inviting one address (each withdraws its previous invitation
  // of it first, so the address is not already invited there). Both recipients, one held by
  // an account and one nobody holds, get the same answers: the limit reveals no account.
  const turns = ['A', 'B', 'A', 'B', 'A'] as const;
  const rows = turns.map((org, i) => ({ org, n: i + 1, sent: i < PER_RECIPIENT }));

  for (const holder of ['an address an account holds', 'an address nobody holds']) {
    it(`${holder}: ${PER_RECIPIENT} an hour, then 429 code 8 and no email; after the hour, again`, async () => {
      const email =
        holder === 'an address nobody holds'
          ? uniqueEmail('nobody')
          : (await createStandaloneAccount(svc)).email;
      const orgs = { A: await createMember(svc), B: await createMember(svc) };
      const last: Record<string, string | undefined> = {};
      for (const row of rows) {
        const by = orgs[row.org];
        const previous = last[row.org];
        if (previous) expect((await withdraw(by, previous)).statusCode).toBe(200);
        const before = await mailsTo(email);
        const res = await invite(by, email);
        if (row.sent) {
          expect(res.statusCode, `invitation ${row.n}: ${res.body}`).toBe(200);
          last[row.org] = res.json<{ id: string }>().id;
          expect(await mailsTo(email)).toBe(before + 1);
        } else {
          expect(res.statusCode, `invitation ${row.n}`).toBe(429);
          const body = res.json<{ code: number; details: Record<string, number> }>();
          expect(body.code).toBe(8);
          expect(body.details.max_invitations_per_recipient_per_hour).toBe(PER_RECIPIENT);
          expect(body.details.retry_after_seconds).toBeGreaterThan(0);
          expect(body.details.retry_after_seconds).toBeLessThanOrEqual(3600);
          expect(Number(res.headers['retry-after'])).toBe(body.details.retry_after_seconds);
          expect(await mailsTo(email)).toBe(before);
          last[row.org] = undefined;
        }
      }
      // Refused invitations left nothing behind.
      expect(await invitationsOf(email)).toBe(PER_RECIPIENT);
      // Another address is not held back by this one's count.
      expect((await invite(orgs.A, uniqueEmail('other'))).statusCode).toBe(200);
      // An hour after the first invitation, one more may be sent (by a new sign-in: the
      // ones above are no longer recent).
      svc.clock.advance(HOUR);
      const later = await createMember(svc);
      const res = await invite(later, email);
      expect(res.statusCode, res.body).toBe(200);
      expect(await invitationsOf(email)).toBe(PER_RECIPIENT + 1);
    });
  }
});

describe('pending invitations per organization', () => {
  it(`at most ${PENDING} waiting; a withdrawn or expired one frees its place`, async () => {
    let owner = await createMember(svc);
    const ids: string[] = [];
    for (let i = 0; i < PENDING; i++) {
      const res = await invite(owner, uniqueEmail('pending'));
      expect(res.statusCode, res.body).toBe(200);
      ids.push(res.json<{ id: string }>().id);
    }
    const email = uniqueEmail('one-too-many');
    const refused = await invite(owner, email);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({
      code: 8,
      details: { max_pending_invitations: PENDING },
    });
    expect(await mailsTo(email)).toBe(0);
    expect(await invitationsOf(email)).toBe(0);
    // Another organization has its own places.
    expect((await invite(await createMember(svc), uniqueEmail('elsewhere'))).statusCode).toBe(200);
    // Withdrawing one frees a place.
    expect((await withdraw(owner, ids[0]!)).statusCode).toBe(200);
    expect((await invite(owner, email)).statusCode).toBe(200);
    expect((await invite(owner, uniqueEmail('full-again'))).statusCode).toBe(429);
    // Expired invitations wait for nothing (a new sign-in of an owner of the same organization).
    svc.clock.advance(7 * 24 * HOUR + 1);
    owner = await createMember(svc, { orgId: owner.orgId });
    expect((await invite(owner, uniqueEmail('after-expiry'))).statusCode).toBe(200);
  });
});

describe('organizations per wallet', () => {
  it(`a wallet owns at most ${PER_WALLET} live organizations; deleting one frees its place`, async () => {
    const account = await createStandaloneAccount(svc);
    const create = (name: string) =>
      svc.app.inject({
        method: 'POST',
        url: '/organizations',
        headers: account.headers,
        payload: { name },
      });
    const ids: string[] = [];
    for (let i = 0; i < PER_WALLET; i++) {
      const res = await create(`Org ${i}`);
      expect(res.statusCode, res.body).toBe(200);
      ids.push(res.json<{ id: string }>().id);
    }
    const refused = await create('One too many');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 8, details: { max_organizations: PER_WALLET } });
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM organizations WHERE name = 'One too many'`,
    );
    expect(rows[0]!.n).toBe(0);
    // Another wallet has its own places.
    const other = await createStandaloneAccount(svc);
    const theirs = await svc.app.inject({
      method: 'POST',
      url: '/organizations',
      headers: other.headers,
      payload: { name: 'Theirs' },
    });
    expect(theirs.statusCode).toBe(200);
    // A deleted organization no longer counts.
    const deleted = await svc.app.inject({
      method: 'DELETE',
      url: `/organizations/${ids[0]}`,
      headers: account.headers,
    });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect((await create('In its place')).statusCode).toBe(200);
  });
});
