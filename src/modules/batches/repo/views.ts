import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asNumber } from '../../../db/values.js';
import { COLUMNS, toRow, type BatchRow, type RawBatch } from './rows.js';

/**
 * What a sealed batch's public answers show of actions whose objects' visibility changed
 * since it sealed (docs/batches.md, "An object made private later"; ../views.ts): which of
 * its actions are on private objects now, its published content's view, and the templates
 * whose switch the sealer has still to bring the batches up to date with.
 */

/** A batch and the ids of its actions whose object is private now, in execution order. */
export async function findBatchWithPrivateNow(
  exec: Executor,
  id: string,
): Promise<{ row: BatchRow; privateNow: string[] } | null> {
  const { rows } = await exec.execute<RawBatch & { private_now: string[] }>(sql`
    SELECT ${COLUMNS}, ARRAY(${privateNowOf(sql`b.id`)}) AS private_now
    FROM batches b WHERE b.id = ${id}`);
  const found = rows[0];
  if (found === undefined) return null;
  const { private_now, ...raw } = found;
  return { row: toRow(raw), privateNow: private_now };
}

/** The ids of a batch's actions whose object is private now, in execution order. */
export async function privateNowActions(exec: Executor, batchId: string): Promise<string[]> {
  const { rows } = await exec.execute<{ id: string }>(privateNowOf(sql`${batchId}`));
  return rows.map((r) => r.id);
}

/** The actions of the batch `batchId` names whose object is private now (objects.is_public). */
const privateNowOf = (batchId: ReturnType<typeof sql>) => sql`
  SELECT a.id FROM action_logs a JOIN objects o ON o.id = a.object_id
  WHERE a.batch_id = ${batchId} AND NOT o.is_public ORDER BY a.seq`;

/**
 * Publishes a sealed batch's content anew under `ipfsUrl`, in content `version`, showing
 * `hidden` (actions sealed public) as private; the CID it had joins `superseded_ipfs_urls`
 * (each CID once, the one it has now not among them). False when its content changed
 * meanwhile, or it waits to be re-published as version 3.
 */
export async function saveView(
  exec: Executor,
  id: string,
  v: { version: number; ipfsUrl: string; formerIpfsUrl: string; hidden: string[]; now: Date },
): Promise<boolean> {
  const { rowCount } = await exec.execute(sql`
    UPDATE batches SET version = ${v.version}, ipfs_url = ${v.ipfsUrl},
      hidden_actions = ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(v.hidden)}::jsonb)),
      superseded_ipfs_urls = array_append(
        array_remove(array_remove(superseded_ipfs_urls, ${v.ipfsUrl}::text),
          ${v.formerIpfsUrl}::text),
        ${v.formerIpfsUrl}::text),
      updated_at = ${v.now}
    WHERE id = ${id} AND ipfs_url = ${v.formerIpfsUrl} AND NOT republish`);
  return (rowCount ?? 0) > 0;
}

// --- Visibility switches -----------------------------------------------------------------

/**
 * Notes, in a template's visibility switch's own transaction, that the batches holding its
 * objects' actions are to be brought up to date (from the first of them again).
 */
export async function noteVisibilitySwitch(exec: Executor, templateId: string, now: Date) {
  await exec.execute(sql`
    INSERT INTO batch_visibility_switches (template_id, noted_at) VALUES (${templateId}, ${now})
    ON CONFLICT (template_id) DO UPDATE SET generation = batch_visibility_switches.generation + 1,
      after_sequence = 0, noted_at = ${now}, next_at = NULL`);
}

export interface VisibilitySwitch {
  template_id: string;
  generation: number;
  after_sequence: number;
}

/**
 * Claims the oldest noted switch that is due: no other process takes it for `leaseMs`
 * (one held by a switch still committing is left alone).
 */
export async function claimVisibilitySwitch(
  exec: Executor,
  now: Date,
  leaseMs: number,
): Promise<VisibilitySwitch | null> {
  const { rows } = await exec.execute<{
    template_id: string;
    generation: string | number;
    after_sequence: string | number;
  }>(sql`
    UPDATE batch_visibility_switches SET next_at = ${new Date(now.getTime() + leaseMs)}
    WHERE template_id = (
      SELECT template_id FROM batch_visibility_switches
      WHERE next_at IS NULL OR next_at <= ${now}
      ORDER BY noted_at, template_id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING template_id, generation, after_sequence`);
  const r = rows[0];
  return r
    ? {
        template_id: r.template_id,
        generation: asNumber(r.generation),
        after_sequence: asNumber(r.after_sequence),
      }
    : null;
}

/** A batch holding an action on one of a template's objects. */
export interface TemplateBatch {
  id: string;
  sequence: number;
  /** Its header is not written yet (it is `proving`): its content does not exist yet. */
  unsealed: boolean;
}

/**
 * The batches past `afterSequence` (in chain order, at most `limit`) that hold an action on an
 * object of the template; building batches are left out (their header reads the visibility
 * of its time).
 */
export async function batchesOfTemplate(
  exec: Executor,
  templateId: string,
  afterSequence: number,
  limit: number,
): Promise<TemplateBatch[]> {
  const { rows } = await exec.execute<{
    id: string;
    sequence: string | number;
    unsealed: boolean;
  }>(sql`
    SELECT b.id, b.sequence, b.hash IS NULL AND b.status = 'proving' AS unsealed FROM batches b
    WHERE b.id IN (
      SELECT a.batch_id FROM objects o JOIN action_logs a ON a.object_id = o.id
      WHERE o.template_id = ${templateId} AND a.batch_id IS NOT NULL)
      AND b.sequence > ${afterSequence} AND b.status <> 'building'
    ORDER BY b.sequence LIMIT ${limit}`);
  return rows.map((r) => ({ id: r.id, sequence: asNumber(r.sequence), unsealed: r.unsealed }));
}

/**
 * Records how far a claimed switch got: its batches up to `afterSequence` are done; the rest
 * from `nextAt` (null: at once). Nothing when it was noted again meanwhile (it starts over).
 */
export async function progressVisibilitySwitch(
  exec: Executor,
  s: VisibilitySwitch,
  afterSequence: number,
  nextAt: Date | null,
): Promise<void> {
  await exec.execute(sql`
    UPDATE batch_visibility_switches SET after_sequence = ${afterSequence}, next_at = ${nextAt}
    WHERE template_id = (${unlocked(s)})`);
}

/** A claimed switch is done; kept when it was noted again meanwhile (it starts over). */
export async function finishVisibilitySwitch(exec: Executor, s: VisibilitySwitch): Promise<void> {
  await exec.execute(sql`
    DELETE FROM batch_visibility_switches WHERE template_id = (${unlocked(s)})`);
}

/**
 * The claimed switch's row unless it was noted again since (another generation), or is being
 * noted again by a switch not committed yet (locked: never waited for, its commit makes the
 * row due again at once).
 */
const unlocked = (s: VisibilitySwitch) => sql`
  SELECT template_id FROM batch_visibility_switches
  WHERE template_id = ${s.template_id} AND generation = ${s.generation} FOR UPDATE SKIP LOCKED`;
