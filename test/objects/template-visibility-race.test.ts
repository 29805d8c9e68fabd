import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import {
  ACTION_FEE,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  type EoaSigner,
} from '../helpers/ebus.js';
import { insertObject } from '../helpers/objects.js';
import { connect, pidOf, started, waitsOrDone } from '../helpers/locks.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * A template switched from public to private while a mint of it commits (issue 27, item 9).
 * An object copies its template's flag when it is minted; the switch copies the new flag to
 * the objects that exist. These tests stop one side at a chosen point, with locks held by a
 * client of their own (a row lock, or an advisory lock a trigger of this test's database
 * waits on), let the other side run, then release it: whatever the order, the new object
 * ends private, like its template, and nothing answers 500.
 */
let svc: TestService;
/** Holds the locks that stop one side. */
let hold: pg.Client;
/** A second holder, for a second lock. */
let hold2: pg.Client;
/** Looks at pg_stat_activity. */
let probe: pg.Client;

/** The advisory lock the test trigger on ledger_entries waits for while `hold` has it. */
const PAUSE_KEY = 7_411_027_009;

beforeAll(async () => {
  svc = await startTestService();
  [hold, hold2, probe] = await Promise.all([connect(svc), connect(svc), connect(svc)]);
  // Test-only: an action's fee row waits here while `hold` has PAUSE_KEY. The group
  // statement writes its fee rows last, once it has locked the organization row, so this
  // stops a group with every lock it takes held and its new objects written, not committed.
  await hold.query(`CREATE FUNCTION test_pause_fee() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.kind = 'action_fee' THEN PERFORM pg_advisory_xact_lock_shared(${PAUSE_KEY}); END IF;
      RETURN NEW;
    END $$`);
  await hold.query(`CREATE TRIGGER test_pause_fee BEFORE INSERT ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION test_pause_fee()`);
});
// A failed test leaves nothing held for the next.
afterEach(async () => {
  for (const c of [hold, hold2, probe]) {
    await c.query('ROLLBACK');
    await c.query('SELECT pg_advisory_unlock_all()');
  }
});
afterAll(async () => {
  await Promise.all([hold?.end(), hold2?.end(), probe?.end()]);
  await svc?.stop();
});

/** The group statement (repo/group-write.ts). */
const GROUP = 'new_objects AS';
/** Any statement of the switch (templates/repo.ts), none of the group statement. */
const SWITCH =
  'FROM templates WHERE organization_id|UPDATE templates SET|template_switches|UPDATE objects SET is_public';

async function mint(signer: EoaSigner, templateId: string, nonce: number) {
  const body = await signEoa(svc, signer, {
    name: 'mint',
    params: { template_id: templateId },
    nonce,
  });
  return svc.app.inject({
    method: 'POST',
    url: '/ebus/execute',
    headers: signer.headers,
    payload: body,
  });
}

async function setPublic(owner: EoaSigner, templateId: string, isPublic: boolean) {
  return svc.app.inject({
    method: 'PUT',
    url: `/templates/${templateId}`,
    headers: owner.headers,
    payload: { is_public: isPublic },
  });
}

/** objects.is_public and what the public read answers for the object. */
async function visibility(objectId: string) {
  const { rows } = await svc.container.db.execute<{ is_public: boolean }>(
    sql`SELECT is_public FROM objects WHERE id = ${objectId}`,
  );
  const pub = await svc.app.inject({ method: 'GET', url: `/public/objects?id=${objectId}` });
  return { row: rows[0]!.is_public, listed: pub.json<{ objects: unknown[] }>().objects.length };
}

/** A funded owner and a template (public); one mint first so the event bus remembers it. */
async function setup(isPublic = true) {
  const owner = await createSigner(svc, { role: 'owner' });
  await fund(svc, owner.orgId, ACTION_FEE * 20n);
  const templateId = await createTemplate(svc, owner.orgId, { isPublic });
  const first = await mint(owner, templateId, 0);
  expect(first.statusCode, first.body).toBe(200);
  const firstId = first.json().object.id as string;
  expect(await visibility(firstId)).toEqual(
    isPublic ? { row: true, listed: 1 } : { row: false, listed: 0 },
  );
  return { owner, templateId, firstId };
}

describe('a template switched to private while a mint of it commits', () => {
  it('the switch commits between the mint statement reading the template and its commit', async () => {
    const { owner, templateId, firstId } = await setup();
    // Stop the group statement on the signer's wallet row: it has taken its snapshot (the
    // template still public) and written its object, and has not yet locked the organization.
    await hold.query('BEGIN');
    await hold.query('SELECT 1 FROM wallets WHERE id = $1 FOR UPDATE', [owner.walletId]);
    const minting = started(mint(owner, templateId, 1));
    expect(await waitsOrDone(probe, GROUP, minting, await pidOf(hold))).not.toBeNull();

    const switched = await setPublic(owner, templateId, false);
    expect(switched.statusCode, switched.body).toBe(200);
    await hold.query('ROLLBACK');

    const minted = await minting;
    expect(minted.statusCode, minted.body).toBe(200);
    const objectId = minted.json().object.id as string;
    expect(await visibility(objectId)).toEqual({ row: false, listed: 0 });
    expect(await visibility(firstId)).toEqual({ row: false, listed: 0 });
  });

  it('the switch starts while the mint statement holds its locks, its object written', async () => {
    const { owner, templateId } = await setup();
    await hold.query('SELECT pg_advisory_lock($1)', [PAUSE_KEY]);
    const minting = started(mint(owner, templateId, 1));
    const group = await waitsOrDone(probe, GROUP, minting, await pidOf(hold));
    expect(group).not.toBeNull();

    // The switch waits for the group (for the organization row it holds).
    const switching = started(setPublic(owner, templateId, false));
    expect(await waitsOrDone(probe, SWITCH, switching, group!)).not.toBeNull();
    await hold.query('SELECT pg_advisory_unlock($1)', [PAUSE_KEY]);

    const [minted, switched] = await Promise.all([minting, switching]);
    expect(minted.statusCode, minted.body).toBe(200);
    expect(switched.statusCode, switched.body).toBe(200);
    expect(await visibility(minted.json().object.id as string)).toEqual({ row: false, listed: 0 });
  });

  it('the mint statement starts while the switch waits for the organization row', async () => {
    const { owner, templateId } = await setup();
    // Stop the switch where it waits for the groups in flight: it has changed the template
    // and its objects, not committed. The mint then reads the template as it was.
    await hold.query('BEGIN');
    await hold.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [owner.orgId]);
    const switching = started(setPublic(owner, templateId, false));
    expect(await waitsOrDone(probe, SWITCH, switching, await pidOf(hold))).not.toBeNull();
    const minting = started(mint(owner, templateId, 1));
    expect(await waitsOrDone(probe, GROUP, minting)).not.toBeNull();
    await hold.query('ROLLBACK');

    const [minted, switched] = await Promise.all([minting, switching]);
    expect(minted.statusCode, minted.body).toBe(200);
    expect(switched.statusCode, switched.body).toBe(200);
    expect(await visibility(minted.json().object.id as string)).toEqual({ row: false, listed: 0 });
  });

  it('the mint commits while the switch is copying the flag to the existing objects', async () => {
    const { owner, templateId, firstId } = await setup();
    // Stop the switch on an existing object of the template: the template row is changed
    // (not committed), the organization row not yet taken. The mint commits meanwhile.
    await hold.query('BEGIN');
    await hold.query('SELECT 1 FROM objects WHERE id = $1 FOR UPDATE', [firstId]);
    const switching = started(setPublic(owner, templateId, false));
    expect(await waitsOrDone(probe, SWITCH, switching, await pidOf(hold))).not.toBeNull();
    const minted = await mint(owner, templateId, 1);
    expect(minted.statusCode, minted.body).toBe(200);
    await hold.query('ROLLBACK');

    const switched = await switching;
    expect(switched.statusCode, switched.body).toBe(200);
    expect(await visibility(minted.json().object.id as string)).toEqual({ row: false, listed: 0 });
    expect(await visibility(firstId)).toEqual({ row: false, listed: 0 });
  });

  it('a mint paid by another organization (the locked path) holds the switch off until it commits', async () => {
    const { owner, templateId } = await setup();
    // A signer of another organization who is a member of the template's: its mints are paid
    // by its own organization and always take the locked path.
    const outsider = await createSigner(svc, { role: 'owner' });
    await fund(svc, outsider.orgId, ACTION_FEE * 5n);
    const now = svc.clock.now();
    await svc.container.db.execute(sql`INSERT INTO members
        (id, organization_id, wallet_id, email, role, status, created_at, updated_at)
      VALUES (${newId('member')}, ${owner.orgId}, ${outsider.walletId}, ${outsider.email},
        'admin', 'active', ${now}, ${now})`);

    await hold.query('SELECT pg_advisory_lock($1)', [PAUSE_KEY]);
    const minting = started(mint(outsider, templateId, 0));
    const group = await waitsOrDone(probe, GROUP, minting, await pidOf(hold));
    expect(group).not.toBeNull();
    // The switch waits for the group (for the template row it share-locked).
    const switching = started(setPublic(owner, templateId, false));
    expect(await waitsOrDone(probe, SWITCH, switching, group!)).not.toBeNull();
    await hold.query('SELECT pg_advisory_unlock($1)', [PAUSE_KEY]);

    const [minted, switched] = await Promise.all([minting, switching]);
    expect(minted.statusCode, minted.body).toBe(200);
    expect(switched.statusCode, switched.body).toBe(200);
    const object = minted.json().object as { id: string; organization_id?: string };
    expect(await visibility(object.id)).toEqual({ row: false, listed: 0 });
  });

  it('private → public works the same way: the new object ends public', async () => {
    const { owner, templateId } = await setup(false);
    await hold.query('BEGIN');
    await hold.query('SELECT 1 FROM wallets WHERE id = $1 FOR UPDATE', [owner.walletId]);
    const minting = started(mint(owner, templateId, 1));
    expect(await waitsOrDone(probe, GROUP, minting, await pidOf(hold))).not.toBeNull();
    const switched = await setPublic(owner, templateId, true);
    expect(switched.statusCode, switched.body).toBe(200);
    await hold.query('ROLLBACK');

    const minted = await minting;
    expect(minted.statusCode, minted.body).toBe(200);
    expect(await visibility(minted.json().object.id as string)).toEqual({ row: true, listed: 1 });
  });

  it('a switch that meets an object locked by a waiting group starts again instead of deadlocking', async () => {
    const { owner, templateId } = await setup();
    await hold.query('BEGIN');
    await hold.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [owner.orgId]);
    const switching = started(setPublic(owner, templateId, false));
    expect(await waitsOrDone(probe, SWITCH, switching, await pidOf(hold))).not.toBeNull();
    // An object of the template written after the switch's first copy, public, and locked
    // (as a group updating it and waiting for the organization row would hold it).
    const late = await insertObject(svc, { templateId });
    expect(await visibility(late)).toEqual({ row: true, listed: 1 });
    await hold2.query('BEGIN');
    await hold2.query('SELECT 1 FROM objects WHERE id = $1 FOR UPDATE', [late]);
    await hold.query('ROLLBACK');
    // The switch does not wait for that object while it holds the organization row; it
    // starts again and waits for it on its first copy, holding nothing a group needs.
    expect(await waitsOrDone(probe, SWITCH, switching, await pidOf(hold2))).not.toBeNull();
    // Meanwhile the organization row is free: the event bus of the organization goes on.
    await probe.query('BEGIN');
    await probe.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE NOWAIT', [
      owner.orgId,
    ]);
    await probe.query('ROLLBACK');
    await hold2.query('ROLLBACK');

    const switched = await switching;
    expect(switched.statusCode, switched.body).toBe(200);
    expect(await visibility(late)).toEqual({ row: false, listed: 0 });
  });
});
