import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { AuthSweeper } from '../../src/modules/auth/sweeper.js';
import { createMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';

/**
 * What sign-in leaves behind is deleted once nothing reads it (docs/auth.md, "What is kept"),
 * and nothing that still counts: a failure count inside its window or still blocking, a
 * refresh token spent within a session's lifetime, a code not a day past its expiry.
 */
const svc = useTestService();
const MIN = 60_000;
const DAY = 24 * 60 * MIN;

describe('the auth sweeper', () => {
  it('deletes what is past its use, and keeps what still counts', async () => {
    const db = svc.container.db;
    const now = svc.clock.now();
    const ago = (ms: number) => new Date(now.getTime() - ms);
    const m = await createMember(svc);
    const { rows: s } = await db.execute<{ id: string }>(
      sql`SELECT id FROM sessions WHERE wallet_id = ${m.walletId} LIMIT 1`,
    );
    const sessionId = s[0]!.id;
    const tag = newId('code');
    const failures: [string, Date, Date | null, boolean][] = [
      [`ip:${tag}-old`, ago(2 * 60 * MIN), null, false],
      [`ip:${tag}-old-unblocked`, ago(2 * 60 * MIN), ago(MIN), false],
      [`ip:${tag}-in-window`, ago(10 * MIN), null, true],
      [`ip:${tag}-still-blocked`, ago(2 * 60 * MIN), new Date(now.getTime() + MIN), true],
    ];
    for (const [key, start, until] of failures) {
      await db.execute(sql`INSERT INTO sign_in_failures (key, failures, window_start, blocked_until)
        VALUES (${key}, 3, ${start}, ${until})`);
    }
    const tokens: [string, Date, boolean][] = [
      [`${tag}-t-old`, ago(31 * DAY), false],
      [`${tag}-t-recent`, ago(29 * DAY), true],
    ];
    for (const [hash, at] of tokens) {
      await db.execute(sql`INSERT INTO spent_refresh_tokens (token_hash, session_id, spent_at)
        VALUES (${hash}, ${sessionId}, ${at})`);
    }
    const codes: [string, Date, boolean][] = [
      [newId('code'), ago(2 * DAY), false],
      [newId('code'), ago(12 * 60 * MIN), true],
    ];
    for (const [id, expires] of codes) {
      await db.execute(sql`INSERT INTO codes (id, purpose, wallet_id, channel, recipient, code_hash,
          expires_at, created_at)
        VALUES (${id}, 'otp', ${m.walletId}, 'email', ${`${tag}@example.com`}, 'x', ${expires},
          ${new Date(expires.getTime() - 10 * MIN)})`);
    }

    const sweeper = new AuthSweeper(
      db,
      svc.clock,
      { maxAgeMs: 30 * DAY, idleTimeoutMs: 7 * DAY },
      svc.container.logger,
    );
    expect(await sweeper.sweep()).toBeGreaterThan(0);

    const left = async (table: string, column: string, values: string[]) => {
      const { rows } = await db.execute<{ v: string }>(
        sql`SELECT ${sql.raw(column)} AS v FROM ${sql.raw(table)}
          WHERE ${sql.raw(column)} = ANY(${sql.param(values)}::text[])`,
      );
      return rows.map((r) => r.v).sort();
    };
    expect(
      await left(
        'sign_in_failures',
        'key',
        failures.map((f) => f[0]),
      ),
    ).toEqual(
      failures
        .filter((f) => f[3])
        .map((f) => f[0])
        .sort(),
    );
    expect(
      await left(
        'spent_refresh_tokens',
        'token_hash',
        tokens.map((t) => t[0]),
      ),
    ).toEqual(
      tokens
        .filter((t) => t[2])
        .map((t) => t[0])
        .sort(),
    );
    expect(
      await left(
        'codes',
        'id',
        codes.map((c) => c[0]),
      ),
    ).toEqual(
      codes
        .filter((c) => c[2])
        .map((c) => c[0])
        .sort(),
    );
  });

  // Sessions are kept 30 days after they ended (docs/auth.md, "What is kept"); one nothing
  // marked ended is over once unused for the shorter of its idle timeout (7 days here) and
  // its maximum age (30 days), so it goes 37 days after its last use. Its spent refresh
  // tokens go with it.
  it('deletes sessions long ended, and keeps live and recently ended ones', async () => {
    const db = svc.container.db;
    const now = svc.clock.now();
    const ago = (ms: number) => new Date(now.getTime() - ms);
    const m = await createMember(svc);
    const rows: { name: string; ended: Date | null; lastUsed: Date; kept: boolean }[] = [
      { name: 'ended 31 days ago', ended: ago(31 * DAY), lastUsed: ago(40 * DAY), kept: false },
      { name: 'ended 29 days ago', ended: ago(29 * DAY), lastUsed: ago(40 * DAY), kept: true },
      { name: 'ended just now', ended: now, lastUsed: ago(MIN), kept: true },
      { name: 'live, used now', ended: null, lastUsed: now, kept: true },
      { name: 'unmarked, unused 38 days', ended: null, lastUsed: ago(38 * DAY), kept: false },
      { name: 'unmarked, unused 36 days', ended: null, lastUsed: ago(36 * DAY), kept: true },
    ];
    const ids = rows.map(() => newId('session'));
    for (const [k, r] of rows.entries()) {
      await db.execute(sql`INSERT INTO sessions (id, wallet_id, refresh_token_hash, device,
          ended_at, last_used_at, created_at)
        VALUES (${ids[k]!}, ${m.walletId}, ${`rt-${ids[k]!}`}, 'test', ${r.ended}, ${r.lastUsed},
          ${ago(45 * DAY)})`);
      // A token it spent recently: too recent for its own rule, gone with its session.
      await db.execute(sql`INSERT INTO spent_refresh_tokens (token_hash, session_id, spent_at)
        VALUES (${`spent-${ids[k]!}`}, ${ids[k]!}, ${ago(MIN)})`);
    }

    const sweeper = new AuthSweeper(
      db,
      svc.clock,
      { maxAgeMs: 30 * DAY, idleTimeoutMs: 7 * DAY },
      svc.container.logger,
    );
    await sweeper.sweep();

    const { rows: left } = await db.execute<{ id: string }>(
      sql`SELECT id FROM sessions WHERE id = ANY(${sql.param(ids)}::text[])`,
    );
    const { rows: tokens } = await db.execute<{ session_id: string }>(
      sql`SELECT session_id FROM spent_refresh_tokens WHERE session_id = ANY(${sql.param(ids)}::text[])`,
    );
    const kept = rows.flatMap((r, k) => (r.kept ? [ids[k]!] : []));
    const named = (list: string[]) => list.map((id) => rows[ids.indexOf(id)]!.name).sort();
    expect(named(left.map((r) => r.id))).toEqual(named(kept));
    expect(named(tokens.map((r) => r.session_id))).toEqual(named(kept));
    // The member's own session, live, is still there.
    expect(
      (await db.execute(sql`SELECT 1 FROM sessions WHERE id = ${m.sessionId}`)).rows,
    ).toHaveLength(1);
  });
});
