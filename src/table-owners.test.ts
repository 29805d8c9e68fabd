import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every table has ONE owning module, the only one whose code writes it (docs/architecture.md,
 * "Tables and their owners"). Another module reaches a table through the owner's service or
 * index.ts, or through an interface it declares that the owner implements (src/container.ts
 * wires it). This test reads every SQL statement under src/ and fails on a write (INSERT,
 * UPDATE, DELETE, MERGE; an upsert's ON CONFLICT DO UPDATE writes the INSERT's table; a write
 * inside a CTE counts like any other) of a table from outside its owner. Pure: it reads files.
 */
const OWNERS: Record<string, string> = {
  access_requests: 'support',
  action_logs: 'ebus',
  address_notices: 'wallets',
  api_keys: 'api-keys',
  batch_keys: 'batches',
  batch_salt_keys: 'batches',
  batch_visibility_switches: 'batches',
  batches: 'batches',
  code_requests: 'auth',
  code_trusted_requesters: 'auth',
  codes: 'auth',
  credentials: 'wallets',
  deposits: 'deposits',
  files: 'storage',
  storage_usage: 'storage',
  idempotency_keys: 'idempotency',
  invitation_emails: 'members',
  ledger_entries: 'balance',
  log_checkpoints: 'log',
  log_cosignatures: 'log',
  log_entries: 'log',
  log_keys: 'log',
  log_tiles: 'log',
  log_witness_state: 'log',
  members: 'members',
  objects: 'objects',
  organizations: 'organizations',
  outbox_messages: 'notify',
  policies: 'policies',
  policy_usage: 'policies',
  schema_migrations: 'db',
  sessions: 'auth',
  sign_in_failures: 'auth',
  signing_keys: 'auth',
  siwe_nonces: 'auth',
  spent_id_tokens: 'auth',
  spent_refresh_tokens: 'auth',
  support_messages: 'support',
  template_versions: 'templates',
  templates: 'templates',
  wallets: 'wallets',
  webauthn_challenges: 'auth',
  webhook_deliveries: 'webhooks',
  webhook_replay_usage: 'webhooks',
  webhooks: 'webhooks',
};

const root = join(import.meta.dirname, '..');
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.(ts|mts|js|mjs)$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [p] : [];
  });
}

/** The module a file of src/ belongs to: src/modules/<name>/…, else src/<folder>. */
function moduleOf(file: string): string {
  const parts = relative(src, file).split('/');
  if (parts[0] === 'modules') return parts[1]!;
  return parts.length > 1 ? parts[0]! : 'src';
}

/** The code without its comments (prose may say "update the …"). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|[^:\\])\/\/.*$/gm, '$1');
}

/**
 * The tables a piece of code writes. SQL keywords are written in capitals in this code base;
 * `FOR UPDATE`, `FOR NO KEY UPDATE`, `DO UPDATE SET` name no table and do not match.
 */
export function writtenTables(code: string): string[] {
  const found: string[] = [];
  const write =
    /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM|MERGE\s+INTO)\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)\b/g;
  for (const m of code.matchAll(write)) found.push(m[1]!);
  return found;
}

const writes = sourceFiles(src).flatMap((file) =>
  writtenTables(withoutComments(readFileSync(file, 'utf8'))).map((table) => ({
    file: relative(root, file),
    module: moduleOf(file),
    table,
  })),
);

describe('one owner per table', () => {
  it('finds the writes it checks (the reader is not blind)', () => {
    const seen = new Set(writes.map((w) => `${w.module} ${w.table}`));
    // One of each kind, inside a CTE of the event bus's group statement included.
    expect(seen).toContain('objects objects'); // INSERT and UPDATE in objects/repo.ts
    expect(seen).toContain('ebus action_logs'); // INSERT INTO action_logs inside the group CTE
    expect(seen).toContain('auth siwe_nonces'); // DELETE FROM
    expect(writes.length).toBeGreaterThan(60);
  });

  it('recognises INSERT, UPDATE, DELETE, MERGE and upserts, in CTEs too, and skips locks', () => {
    const sql = `WITH a AS (INSERT INTO t1 (x) VALUES (1) ON CONFLICT (x) DO UPDATE SET x = 2
      RETURNING 1), b AS (UPDATE t2 w SET y = 1 RETURNING 1), c AS (DELETE FROM t3 RETURNING 1)
      MERGE INTO t4 USING s ON true WHEN MATCHED THEN DO NOTHING;
      SELECT 1 FROM t5 FOR NO KEY UPDATE NOWAIT; SELECT 1 FROM t6 FOR UPDATE OF t6`;
    expect(writtenTables(sql)).toEqual(['t1', 't2', 't3', 't4']);
    expect(writtenTables(withoutComments('// update the objects\n/* UPDATE wallets */'))).toEqual(
      [],
    );
  });

  it('every written table has an owner, and only its owner writes it', () => {
    const strangers = writes.filter((w) => OWNERS[w.table] !== w.module);
    expect(
      strangers.map(
        (w) => `${w.file} writes ${w.table} (owner: ${OWNERS[w.table] ?? 'none listed'})`,
      ),
    ).toEqual([]);
  });

  it('every table the migrations create has an owner, listed in docs/architecture.md', () => {
    const dir = join(src, 'db/migrations');
    const created = new Set(
      readdirSync(dir)
        .filter((f) => f.endsWith('.sql'))
        .flatMap((f) =>
          [
            ...readFileSync(join(dir, f), 'utf8').matchAll(
              /CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)/gi,
            ),
          ].map((m) => m[1]!.toLowerCase()),
        ),
    );
    expect([...created].filter((t) => !(t in OWNERS))).toEqual([]);
    const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
    const listed = Object.entries(OWNERS).filter(
      ([table, owner]) => !doc.includes(`| \`${table}\` | \`${owner}\``),
    );
    expect(listed.map(([t, o]) => `${t} → ${o}`)).toEqual([]);
  });
});
