import type { Executor } from '../../db/pool.js';
import { canonicalJson } from '../../lib/canonical-json.js';
import {
  GENESIS_HASH,
  objectRules,
  reapplyAction,
  type ActionName,
  type ObjectRecord,
  type ObjectState,
  type TemplateInfo,
} from '../objects/index.js';
import { toActionLogRecord } from './action-logs.js';
import {
  findLoggedAction,
  findObjectActions,
  findObjectState,
  findTemplateVersions,
  type LoggedActionRow,
} from './repo/replay.js';
import type { SignatureBody } from './schema.js';
import type { ActionLogRecord } from './types.js';

/**
 * How many logged actions one request's replays read and apply again at most, together
 * (docs/ebus.md, "Executing again"): a replay is free, so what it may cost is bounded like
 * what the request could apply (a batch of 100 actions). An action further into its object's
 * history than the budget left keeps its refusal.
 */
export const REPLAY_STEPS_PER_REQUEST = 1_000;

/** What is left of a request's replay steps (one per request, spent by its replays in turn). */
export interface ReplayBudget {
  steps: number;
}

export const replayBudget = (): ReplayBudget => ({ steps: REPLAY_STEPS_PER_REQUEST });

/** What an already applied action answered: its log record and the object as it left it. */
export interface ReplayedAction {
  action: ActionLogRecord;
  object: ObjectRecord;
}

/** The signature as the action log keeps it (the same form plan.ts writes). */
function loggedSignature(s: SignatureBody): ActionLogRecord['signature'] {
  if (s.type === 'eoa') return s.signature;
  const r = s.credential.response;
  return {
    credential_id: s.credential.id,
    authenticator_data: r.authenticatorData,
    client_data_json: r.clientDataJSON,
    signature: r.signature,
  };
}

function sameSignature(logged: ActionLogRecord['signature'], given: SignatureBody): boolean {
  try {
    return canonicalJson(logged) === canonicalJson(loggedSignature(given));
  } catch {
    return false;
  }
}

/**
 * A signed action is its own idempotency key: when the exact signed text (its hash) with
 * the same signature was already applied in this organization, the answer it gave — the
 * log record and the object as that action left it. Called only once an action has been
 * refused (its nonce used, expired, a passkey counter that no longer moves…), so the
 * normal path pays nothing. Null when it was not applied (the refusal stands).
 */
export async function findReplay(
  exec: Executor,
  orgId: string,
  hash: string,
  signature: SignatureBody,
  budget: ReplayBudget,
): Promise<ReplayedAction | null> {
  const row = await findLoggedAction(exec, orgId, hash);
  if (!row || !row.object_id || !row.integrity_hash) return null;
  if (!sameSignature(row.signature, signature)) return null;
  const object = await objectAsLeftBy(exec, row, budget);
  if (!object) return null;
  const { prev_integrity_hash: _p, integrity_hash: _i, ...log } = row;
  return { action: toActionLogRecord(log), object: objectRules.record(object) };
}

/**
 * The object as the logged action left it: the object itself when nothing changed it
 * since, else rebuilt by applying its logged actions from the mint with the template
 * version each was applied with, every step checked against the integrity hash it left.
 * Null when the chain cannot be rebuilt (the refusal then stands).
 */
async function objectAsLeftBy(
  exec: Executor,
  target: LoggedActionRow,
  budget: ReplayBudget,
): Promise<ObjectState | null> {
  const current = await findObjectState(exec, target.object_id!);
  if (!current) return null;
  if (current.integrity_hash === target.integrity_hash) return current;
  if (budget.steps <= 0) return null;
  // The chain from the mint up to the target only, and no more of it than the budget.
  const logs = await findObjectActions(exec, target.object_id!, target.seq, budget.steps);
  budget.steps -= logs.length;
  const next = new Map<string, LoggedActionRow>();
  for (const l of logs) if (l.prev_integrity_hash) next.set(l.prev_integrity_hash, l);
  const templates = await findTemplateVersions(exec, current.template_id);
  let state: ObjectState | null = null;
  let link = next.get(GENESIS_HASH);
  for (let steps = 0; link && steps < logs.length; steps++) {
    const template = templates.get(link.template_version ?? 1) ?? null;
    if (!template) return null;
    state = replayStep(link, state, template, current);
    if (!state || state.integrity_hash !== link.integrity_hash) return null;
    if (link.id === target.id) return state;
    link = next.get(state.integrity_hash);
  }
  return null;
}

/** One logged action applied again to the state before it (its rights were checked then). */
function replayStep(
  log: LoggedActionRow,
  object: ObjectState | null,
  template: TemplateInfo,
  current: ObjectState,
): ObjectState | null {
  const result = reapplyAction({
    name: log.name as ActionName,
    params: log.params,
    signerAddress: log.wallet,
    // The rights were checked when it was applied (who could see the object included).
    actingOrgId: current.organization_id,
    signerRoleInTemplateOrg: 'owner',
    object,
    // The rights were checked when it was applied: the template's action list may have changed.
    template: { ...template, actions: [log.name] },
    actionHash: log.hash,
    now: log.created_at,
    newObjectId: current.id,
  });
  if (!result.ok) return null;
  // Not part of any rule: the flag follows the template, as the object row holds it.
  return { ...result.next, is_public: current.is_public };
}
