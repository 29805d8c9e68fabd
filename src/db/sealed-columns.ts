import { sql } from 'drizzle-orm';
import {
  isSealed,
  SEALED_MARK,
  SealedSecretError,
  type SecretPlace,
  type SecretSealer,
} from '../lib/sealed-secret.js';
import type { Db, Executor } from './pool.js';

/** Serialises the start-up pass of every process, table by table (one transaction each). */
const SECRETS_LOCK = 7_411_002_003;
/** Values written back per statement. */
const CHUNK = 500;

/** A stored value as its owner's repo reads it: text (text, jsonb) or bytes (bytea). */
export type StoredSecret<V extends string | Buffer = string | Buffer> = {
  row: string;
  value: V;
};

/**
 * A column that keeps a secret (src/lib/sealed-secret.ts), as its table's owner reads and
 * writes it (docs/architecture.md, "Tables and their owners"): the owner's repo holds the SQL.
 */
export interface SecretColumn<V extends string | Buffer = string | Buffer> {
  /** `table.column`, bound with the row's id into each sealed value. */
  name: string;
  /** The place of a row's value, when it opens as more than `{ column: name, row }`. */
  place?: (row: string) => SecretPlace;
  /**
   * The rows whose value starts with `prefix` (`starting`) or does not; NULLs left out. A
   * jsonb value is read as its text (`#>> '{}'`), so a sealed one is its string; a bytea
   * one as bytes, compared with the prefix's ASCII bytes.
   */
  read(exec: Executor, prefix: string, starting: boolean): Promise<StoredSecret<V>[]>;
  /** Writes each value over `old` where the row still holds `old`; answers how many it wrote. */
  store(exec: Executor, changes: readonly SecretChange<V>[]): Promise<number>;
}

export type SecretChange<V extends string | Buffer = string | Buffer> = {
  row: string;
  old: V;
  value: V;
};

export interface SecretTable {
  table: string;
  columns: readonly SecretColumn[];
}

export interface SealCounts {
  /** Clear values sealed under SECRETS_KEY. */
  sealed: number;
  /** Values sealed under a key of SECRETS_KEY_PREVIOUS, sealed again under SECRETS_KEY. */
  resealed: number;
}

/**
 * Runs a repo call that carries secrets: a failure is rethrown without the driver's error,
 * whose text lists the parameters (drizzle) or the failing row (PostgreSQL).
 */
async function quietly<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof SealedSecretError) throw err;
    const e = err as { code?: string; cause?: { code?: string } };
    // The cause is dropped on purpose: its text may carry a secret.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`${what} failed (SQLSTATE ${e.cause?.code ?? e.code ?? 'unknown'})`);
  }
}

/**
 * The start-up pass over stored secrets (docs/self-hosting.md, "Secrets at rest"). With
 * SECRETS_KEY set, each table in one transaction under one advisory lock (so processes
 * starting together take turns, and the later ones find nothing left): every clear value is
 * sealed, every value sealed under a previous key is sealed again under SECRETS_KEY. Without
 * it, nothing is written, and a sealed value anywhere stops the start. Either way a sealed
 * value that no key given opens throws a SealedSecretError naming the setting to fix: a
 * secret is never taken as missing (its owner would make a new one in its place). With
 * `write` false (a restore's check) nothing is written: the values are only opened.
 */
export async function sealStoredSecrets(
  db: Db,
  sealer: SecretSealer,
  tables: readonly SecretTable[],
  write = true,
): Promise<Record<string, SealCounts>> {
  const counts: Record<string, SealCounts> = {};
  const prefix = sealer.prefix;
  for (const { table, columns } of tables) {
    const pass = async (exec: Executor) => {
      const c: SealCounts = { sealed: 0, resealed: 0 };
      for (const column of columns) {
        // With a key: every value (those sealed under it must open too). Without: what is
        // sealed (must open, so throws).
        const rows = await quietly(`reading ${column.name}`, () =>
          prefix === null ? column.read(exec, SEALED_MARK, true) : column.read(exec, '', true),
        );
        const sealing: SecretChange[] = [];
        const resealing: SecretChange[] = [];
        for (const r of rows) {
          const at = column.place?.(r.row) ?? { column: column.name, row: r.row };
          const value = sealer.reseal(r.value, at);
          if (value === null) continue;
          (isSealed(r.value) ? resealing : sealing).push({ row: r.row, old: r.value, value });
        }
        if (!write) {
          c.sealed += sealing.length;
          c.resealed += resealing.length;
          continue;
        }
        // Counted as written: a row changed since it was read (a rotation) is left as it is.
        for (const [changes, count] of [
          [sealing, 'sealed'],
          [resealing, 'resealed'],
        ] as const) {
          for (let i = 0; i < changes.length; i += CHUNK) {
            c[count] += await quietly(`sealing ${column.name}`, () =>
              column.store(exec, changes.slice(i, i + CHUNK)),
            );
          }
        }
      }
      counts[table] = c;
    };
    if (prefix === null || !write) await pass(db);
    else {
      await db.transaction(async (tx) => {
        await tx.execute(sql`SELECT pg_advisory_xact_lock(${SECRETS_LOCK}::bigint)`);
        await pass(tx);
      });
    }
  }
  return counts;
}
