import { AppError, Code, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { isRole, type Role } from '../../lib/permissions.js';
import type { ObjectRules, ObjectState, TemplateInfo } from '../objects/index.js';
import type { PolicyGate } from '../policies/index.js';
import type { GroupCharge, GroupWrite } from './repo/group-write.js';
import {
  credentialKey,
  insufficientBalance,
  isMint,
  mintTemplateId,
  nonceError,
  objectIdOf,
  removedCredential,
} from './group-items.js';
import type { SignatureBody } from './schema.js';
import type { ActionLogRecord, AppliedAction, ApplyOutcome, VerifiedAction } from './types.js';

/** What a group's checks read: the state before its first action. */
export interface GroupState {
  now: Date;
  /** The price of one action. */
  feeWei: bigint;
  /** The paying organization's balance. */
  balance: bigint;
  /** Next nonce of each signer wallet (a wallet missing here does not exist). */
  nonces: ReadonlyMap<string, number>;
  /** Objects the group's non-mint actions name (missing ones do not exist). */
  objects: ReadonlyMap<string, ObjectState>;
  /** Templates of the mints and of the objects. */
  templates: ReadonlyMap<string, TemplateInfo>;
  /** Roles of signers in other organizations whose templates they mint, `${org} ${wallet}`. */
  roles: ReadonlyMap<string, string>;
  /**
   * The signing credentials still live, by `credentialKey`: read under the wallets' locks
   * on the locked path. The optimistic path leaves it out and the statement guards them.
   */
  liveCredentials?: ReadonlySet<string>;
  /** The organization's spend policies (docs/policies.md), checked with the balance. */
  policies?: PolicyGate;
}

/** A group's checks done: who is refused, and what the accepted actions write. */
export interface GroupPlan {
  outcomes: ApplyOutcome[];
  applied: AppliedAction[];
  refused: number;
  write: GroupWrite;
  charge: Omit<GroupCharge, 'orgId'>;
}

/** A group's plan as it runs: what each accepted action leaves for the next to see. */
interface PlanRun {
  orgId: string;
  items: readonly VerifiedAction[];
  state: GroupState;
  rules: ObjectRules;
  /** The paying organization's balance after the accepted actions so far. */
  balance: bigint;
  /** Next nonce of each signer wallet after the accepted actions so far. */
  expected: Map<string, number>;
  /** The objects as the accepted actions so far left them. */
  objects: Map<string, ObjectState>;
  outcomes: ApplyOutcome[];
  applied: AppliedAction[];
  write: GroupWrite;
  ledger: GroupCharge['ledger'];
  /** Object id → its version before the group. */
  changed: Map<string, number>;
  /** Credential keys already in write.credentials. */
  signers: Set<string>;
  /** Wallet id → the items whose nonce is ahead, waiting for the wallet's earlier nonces. */
  waiting: Map<string, number[]>;
  /** Item indexes in the order they are planned (arrival order, parked ones moved up). */
  queue: number[];
  refused: number;
}

/** The rule step's answer for an action it accepts: the object before and after. */
interface Ruled {
  object: ObjectState | null;
  template: TemplateInfo | null;
  next: ObjectState;
}

/**
 * Runs the checks of a group in memory (docs/ebus.md, "Inside"), in arrival order, against the
 * state read before it, each accepted action seeing the ones before it. Each action goes through
 * named steps (`planAction`): the nonce, the action's rule, the fee and balance, then the
 * writes. No I/O: the locked path and the optimistic path of the group committer both run
 * it, and differ only in how they read the state and guard the writes.
 */
export function planGroup(
  orgId: string,
  items: readonly VerifiedAction[],
  state: GroupState,
  rules: ObjectRules,
): GroupPlan {
  const run = startPlan(orgId, items, state, rules);
  // Arrival order, except that an action whose nonce is ahead waits (within the group) for
  // the wallet's earlier nonces: consecutive nonces apply in order however they arrived.
  for (let q = 0; q < run.queue.length; q++) planAction(run, q);
  return finishPlan(run);
}

function startPlan(
  orgId: string,
  items: readonly VerifiedAction[],
  state: GroupState,
  rules: ObjectRules,
): PlanRun {
  return {
    orgId,
    items,
    state,
    rules,
    balance: state.balance,
    expected: new Map(state.nonces),
    objects: new Map(state.objects),
    outcomes: new Array<ApplyOutcome>(items.length),
    applied: [],
    write: {
      newObjects: [],
      changedObjects: [],
      logs: [],
      nonces: [],
      signCounts: [],
      credentials: [],
    },
    ledger: [],
    changed: new Map(),
    signers: new Set(),
    waiting: new Map(),
    queue: items.map((_, i) => i),
    refused: 0,
  };
}

/** One action, the `q`-th of the queue, through the steps in order; the first refusal ends it. */
function planAction(run: PlanRun, q: number): void {
  const idx = run.queue[q]!;
  const item = run.items[idx]!;
  const next = nonceStep(run, item, idx);
  if (next === null) return;
  const ruled = ruleStep(run, item);
  if (ruled instanceof AppError) return refuse(run, idx, ruled);
  const short = feeAndBalanceStep(run, item, ruled.template);
  if (short) return refuse(run, idx, short);
  acceptStep(run, item, q, next);
  writesStep(run, item, idx, ruled);
}

function refuse(run: PlanRun, idx: number, error: AppError): void {
  run.outcomes[idx] = { ok: false, error };
  run.refused++;
}

/**
 * The nonce step: the signer's wallet exists, its credential is still live, and the action's
 * nonce is the wallet's next. Answers that next nonce; null when the action is refused, or
 * parked (its nonce is ahead) until the wallet's earlier nonces apply.
 */
function nonceStep(run: PlanRun, item: VerifiedAction, idx: number): number | null {
  const next = run.expected.get(item.walletId);
  if (next === undefined) {
    refuse(run, idx, notFound('wallet'));
    return null;
  }
  const live = run.state.liveCredentials;
  if (item.credential && live && !live.has(credentialKey(item.walletId, item.credential))) {
    refuse(run, idx, removedCredential());
    return null;
  }
  if (item.action.nonce > next) {
    const w = run.waiting.get(item.walletId) ?? [];
    w.push(idx);
    run.waiting.set(item.walletId, w);
    return null;
  }
  if (item.action.nonce < next) {
    refuse(run, idx, nonceError(item.action.nonce, next));
    return null;
  }
  return next;
}

/**
 * The rule step: the action's rule (objects' `ObjectRules.apply`) on the object as the group left
 * it, its template and the signer's role there. Answers the object before and after, or the
 * refusal.
 */
function ruleStep(run: PlanRun, item: VerifiedAction): Ruled | AppError {
  const { state, orgId } = run;
  const mint = isMint(item);
  const object = mint ? null : (run.objects.get(objectIdOf(item)) ?? null);
  const template =
    state.templates.get(mint ? mintTemplateId(item) : (object?.template_id ?? '')) ?? null;
  let role: Role | null = null;
  if (mint && template) {
    const r =
      template.organization_id === orgId
        ? item.signerRole
        : state.roles.get(`${template.organization_id} ${item.walletId}`);
    role = r !== undefined && isRole(r) ? r : null;
  }
  const result = run.rules.apply({
    name: item.action.name,
    params: item.action.params,
    signerAddress: item.walletAddress,
    actingOrgId: orgId,
    signerRoleInTemplateOrg: role,
    object,
    template,
    actionHash: item.hash,
    now: state.now,
    newObjectId: newId('object', state.now.getTime()),
  });
  return result.ok ? { object, template, next: result.next } : result.error;
}

/**
 * The fee and balance step: the fee within the signer's max_fee_wei, the balance to pay it,
 * then the organization's spend policies (docs/policies.md), which count the fee once admitted.
 */
function feeAndBalanceStep(
  run: PlanRun,
  item: VerifiedAction,
  template: TemplateInfo | null,
): AppError | null {
  const { feeWei } = run.state;
  if (item.maxFeeWei !== null && feeWei > item.maxFeeWei) {
    return new AppError(
      Code.FAILED_PRECONDITION,
      `the fee ${feeWei} wei is above max_fee_wei ${item.maxFeeWei}`,
      { fee_wei: feeWei.toString() },
    );
  }
  if (run.balance < feeWei) return insufficientBalance(feeWei);
  const policyRefusal = run.state.policies?.admit(
    {
      ...item.action,
      walletId: item.walletId,
      apiKeyId: item.apiKeyId,
      templateId: template?.id ?? null,
    },
    feeWei,
  );
  return policyRefusal ?? null;
}

/**
 * Accepted: advances the state the next actions of the group see (balance, the wallet's
 * nonce), and moves the wallet's parked action with the following nonce, if any, up next.
 */
function acceptStep(run: PlanRun, item: VerifiedAction, q: number, next: number): void {
  run.balance -= run.state.feeWei;
  run.expected.set(item.walletId, next + 1);
  const parked = run.waiting.get(item.walletId);
  const due = parked?.findIndex((i) => run.items[i]!.action.nonce === next + 1) ?? -1;
  if (parked && due >= 0) run.queue.splice(q + 1, 0, ...parked.splice(due, 1));
}

/** The writes step: the object, the log row, the ledger row and the signer's credential. */
function writesStep(run: PlanRun, item: VerifiedAction, idx: number, ruled: Ruled): void {
  const { write, state, orgId } = run;
  const obj = ruled.next;
  if (isMint(item)) write.newObjects.push(obj);
  else if (!run.changed.has(obj.id)) run.changed.set(obj.id, ruled.object!.version);
  run.objects.set(obj.id, obj);

  const log = actionLog(run, item, obj, ruled.template);
  write.logs.push({
    ...log,
    // Stored, not part of the record: the object's chain link this action made.
    prev_integrity_hash: obj.prev_integrity_hash,
    integrity_hash: obj.integrity_hash,
    wallet_id: item.walletId,
  });
  run.ledger.push({
    id: newId('ledger', state.now.getTime()),
    ref_id: log.id,
    amount_wei: '',
    after_offset_wei: '',
  });
  if (item.passkey) {
    write.signCounts.push({
      id: item.passkey.credentialId,
      sign_count: item.passkey.newSignCount,
    });
  }
  if (item.credential) {
    const key = credentialKey(item.walletId, item.credential);
    if (!run.signers.has(key)) {
      run.signers.add(key);
      write.credentials.push({
        wallet_id: item.walletId,
        type: item.credential.type,
        external_id: item.credential.externalId,
      });
    }
  }
  const a: AppliedAction = { organizationId: orgId, log, object: run.rules.record(obj) };
  run.applied.push(a);
  run.outcomes[idx] = { ok: true, applied: a };
}

/** The action log record of an accepted action. */
function actionLog(
  run: PlanRun,
  item: VerifiedAction,
  obj: ObjectState,
  template: TemplateInfo | null,
): ActionLogRecord {
  const { now, feeWei } = run.state;
  return {
    id: newId('action', now.getTime()),
    hash: item.hash,
    name: item.action.name,
    wallet: item.walletAddress,
    organization_id: run.orgId,
    signature_type: item.signature.type,
    signature: loggedSignature(item.signature),
    nonce: item.action.nonce,
    params: item.action.params,
    expires: item.action.expires,
    object_id: obj.id,
    template_id: obj.template_id,
    template_version: template?.version ?? null,
    fee_wei: feeWei.toString(),
    batch_id: null,
    when_created: now.toISOString(),
  };
}

/**
 * After the last action: refuses the actions still parked (their nonce never came), and
 * completes the writes: the changed objects with their version before, the nonces and the
 * ledger rows.
 */
function finishPlan(run: PlanRun): GroupPlan {
  const { write, ledger, state } = run;
  const { feeWei } = state;
  for (const [walletId, parked] of run.waiting) {
    for (const idx of parked) {
      const given = run.items[idx]!.action.nonce;
      refuse(run, idx, nonceError(given, run.expected.get(walletId)!));
    }
  }
  write.changedObjects = [...run.changed].map(([id, version]) => ({
    ...run.objects.get(id)!,
    expected_version: version,
  }));
  for (const [id, start] of state.nonces) {
    const end = run.expected.get(id)!;
    if (end !== start) write.nonces.push({ id, expected: start, next_nonce: end });
  }
  // Each ledger row's balance_after is the balance after the group's debit plus what the
  // group's later rows still take, so the rows read in order as one debit after another.
  const last = ledger.length - 1;
  ledger.forEach((l, i) => {
    l.amount_wei = (-feeWei).toString();
    l.after_offset_wei = (feeWei * BigInt(last - i)).toString();
  });
  return {
    outcomes: run.outcomes,
    applied: run.applied,
    refused: run.refused,
    write,
    charge: {
      totalFeeWei: feeWei * BigInt(ledger.length),
      ledger,
      policy: state.policies?.charge(),
    },
  };
}

/** The signature as the action log publishes it (docs/ebus.md, "The action log record"). */
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
