import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { privateKeyToAccount } from 'viem/accounts';
import type * as Secp256k1 from 'secp256k1';
import type { Database } from '../src/db/pool.js';
import { eip191Digest } from '../src/lib/crypto/eip191.js';
import { systemClock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { SecretSealer } from '../src/lib/sealed-secret.js';
import { SessionService } from '../src/modules/auth/session-service.js';
import { TokenService } from '../src/modules/auth/token-service.js';
import { buildActionText } from '../src/modules/ebus/action-text.js';
import { RawLane } from './raw-client.js';

/**
 * What the event-bus benchmarks that compare two set-ups share (bench/webhooks.ts,
 * bench/batches.ts): organizations of signing wallets with sessions, presigned mints, the
 * service as a child process, and a closed-loop load of sequential executes per wallet.
 */

const secp = createRequire(import.meta.url)('secp256k1/bindings') as typeof Secp256k1;
export const NETWORK = 'ons-bench';

export interface BenchWallet {
  id: string;
  orgId: string;
  address: string;
  key: Uint8Array;
  token: string;
}

export interface BenchOrg {
  orgId: string;
  templateId: string;
  wallets: BenchWallet[];
}

/** Sessions issued for `publicUrl` (the service's, which checks their audience). */
export async function benchSessions(database: Database, publicUrl: string) {
  const tokens = new TokenService(database.db, systemClock, publicUrl, SecretSealer.none());
  await tokens.init();
  return new SessionService(database.db, systemClock, tokens);
}

/** An organization with a public template (mint, transfer, update) and `count` member wallets signing with EOAs. */
export async function makeBenchOrg(
  database: Database,
  sessions: SessionService,
  count: number,
): Promise<BenchOrg> {
  const db = database.db;
  const orgId = newId('organization');
  const now = new Date();
  await db.execute(sql`INSERT INTO organizations (id, name, balance_wei, created_at, updated_at)
    VALUES (${orgId}, 'bench', ${(10n ** 30n).toString()}::numeric, ${now}, ${now})`);
  const templateId = newId('template');
  await db.execute(sql`INSERT INTO templates (id, organization_id, name, actions, is_public, created_at, updated_at)
    VALUES (${templateId}, ${orgId}, 'bench', '{mint,transfer,update}', true, ${now}, ${now})`);
  const wallets: BenchWallet[] = [];
  for (let i = 0; i < count; i++) {
    const key = randomBytes(32);
    const address = privateKeyToAccount(`0x${key.toString('hex')}`).address.toLowerCase();
    const id = newId('wallet');
    await db.execute(
      sql`INSERT INTO wallets (id, address, created_at, updated_at) VALUES (${id}, ${address}, ${now}, ${now})`,
    );
    await db.execute(sql`INSERT INTO members (id, organization_id, wallet_id, role, status, created_at, updated_at)
      VALUES (${newId('member')}, ${orgId}, ${id}, 'member', 'active', ${now}, ${now})`);
    await db.execute(sql`INSERT INTO credentials (id, wallet_id, type, external_id, created_at)
      VALUES (${newId('credential')}, ${id}, 'eoa', ${address}, ${now})`);
    const t = await sessions.issue(db, { walletId: id, orgId, device: 'bench' });
    wallets.push({ id, orgId, address, key, token: t.access_token });
  }
  return { orgId, templateId, wallets };
}

/** Execute bodies of `count` mints from nonce `from`, signed in advance. */
export function presign(w: BenchWallet, templateId: string, from: number, count: number): string[] {
  const expires = new Date(Date.now() + 3600_000).toISOString();
  const bodies: string[] = [];
  for (let nonce = from; nonce < from + count; nonce++) {
    const action = {
      wallet: w.address,
      name: 'mint',
      params: { template_id: templateId },
      nonce,
      expires,
    };
    const text = buildActionText({ network: NETWORK, organizationId: w.orgId, ...action });
    const { signature, recid } = secp.ecdsaSign(eip191Digest(text), w.key);
    const sig = `0x${Buffer.from(signature).toString('hex')}${(27 + recid).toString(16)}`;
    bodies.push(JSON.stringify({ action, signature: { type: 'eoa', signature: sig } }));
  }
  return bodies;
}

/**
 * Runs two sides' phases for `rounds` rounds, alternating which goes first (ABBA…), so the
 * machine's drift over the run falls on both alike.
 */
export async function alternate(
  rounds: number,
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const [first, second] = round % 2 === 0 ? [a, b] : [b, a];
    await first();
    await second();
  }
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

/**
 * Sequential execute requests per wallet until the bodies or the time run out; `answered`
 * gets each applied action's id and answer time; `paceMs` spaces one lane's requests.
 */
export async function loadPhase(
  port: number,
  lanes: { w: BenchWallet; bodies: string[] }[],
  seconds: number,
  answered?: Map<string, number>,
  paceMs = 0,
) {
  const sockets = await Promise.all(lanes.map(() => RawLane.connect(port)));
  let ok = 0;
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    lanes.map(async ({ w, bodies }, lane) => {
      const headers = { authorization: `Bearer ${w.token}` };
      while (bodies.length > 0 && performance.now() < deadline) {
        const sent = performance.now();
        const res = await sockets[lane]!.send(
          RawLane.post('/ebus/execute', headers, bodies.shift()!),
        );
        if (res.status !== 200)
          throw new Error(`execute answered ${res.status}: ${res.body.toString('utf8')}`);
        ok++;
        if (answered) {
          const id = /"action":\{"id":"(act_[0-9A-Z]{26})"/.exec(res.body.toString('utf8'))?.[1];
          if (id) answered.set(id, performance.now());
        }
        const rest = paceMs - (performance.now() - sent);
        if (rest > 0) await new Promise((r) => setTimeout(r, rest));
      }
    }),
  );
  for (const s of sockets) s.close();
  const elapsed = (performance.now() - start) / 1000;
  return { ok, perSecond: Math.round(ok / elapsed) };
}

/**
 * The service (`src/main.ts`) as a child process on `port`, once `/healthz` answers.
 * `BENCH_CPU_PROF` in `env` (a directory) profiles it with V8's --cpu-prof.
 */
export async function startBenchService(
  port: number,
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  const publicUrl = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [
      '--max-semi-space-size=32',
      ...(env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${env.BENCH_CPU_PROF}`] : []),
      '--import',
      'tsx',
      'src/main.ts',
    ],
    {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: publicUrl,
        NETWORK_ID: NETWORK,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_ENABLED: 'false',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${publicUrl}/healthz`)).ok) return child;
    } catch {
      /* not up yet */
    }
    if (i > 150) throw new Error('service did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
}
