import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { Database } from '../src/db/pool.js';
import { newId } from '../src/lib/ids.js';
import { makeTestCa, type TestCa } from '../test/helpers/webhook-receiver.js';

/**
 * What the benchmarks that deliver webhooks share (bench/webhooks.ts, bench/ebus.ts with
 * BENCH_WEBHOOK=1): a test CA, the HTTPS receiver in a process of its own
 * (webhook-receiver.ts), and a webhook matching every action of a template.
 */
export interface BenchReceiver {
  ca: TestCa;
  proc: ChildProcess;
  url: string;
  /** What the service needs to deliver to it (a loopback address, the test CA). */
  serviceEnv: Record<string, string>;
}

/** Starts the receiver; `onArrivals` gets each report of deliveries' arrivals. */
export async function startBenchReceiver(
  onArrivals: (arrivals: [string, number][]) => void = () => undefined,
): Promise<BenchReceiver> {
  const ca = await makeTestCa();
  const proc = fork(fileURLToPath(new URL('./webhook-receiver.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, RECEIVER_CERT: ca.cert, RECEIVER_KEY: ca.key },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('error', reject);
    proc.on('message', (m: { port?: number; arrivals?: [string, number][] }) => {
      if (m.port) resolve(m.port);
      if (m.arrivals) onArrivals(m.arrivals);
    });
  });
  return {
    ca,
    proc,
    url: `https://127.0.0.1:${port}/hook`,
    serviceEnv: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_CA_FILE: ca.caFile },
  };
}

/** An active webhook of `orgId` with one rule matching every action on `templateId`. */
export async function addBenchWebhook(
  database: Database,
  orgId: string,
  templateId: string,
  url: string,
): Promise<string> {
  const id = newId('webhook');
  const now = new Date();
  await database.db.execute(sql`INSERT INTO webhooks (id, organization_id, url, rules, signing_key,
      active_since, created_at, updated_at)
    VALUES (${id}, ${orgId}, ${url}, ${JSON.stringify([{ template_id: templateId, actions: [], addresses: [] }])}::jsonb,
      ${randomBytes(32)}, ${now}, ${now}, ${now})`);
  return id;
}
