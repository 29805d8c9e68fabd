import type { Logger } from 'pino';
import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, Code, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { isRole, type Role } from '../../lib/permissions.js';
import { toObjectRecord } from '../objects/record.js';
import type { FeeService } from './fees.js';
import type { ApplyHooks } from './hooks.js';
import { chargeGroup, lockGroupInputs, writeGroupState, type GroupWrite } from './group-write.js';
import { findRoles, findTemplates, lockObjects } from './repo.js';
import { applyAction, type RuleInput } from './rules.js';
import type { ObjectParams, MintParams } from './schema.js';
import type {
  ActionLogRecord,
  AppliedAction,
  ApplyOutcome,
  ObjectState,
  TemplateInfo,
  VerifiedAction,
} from './types.js';

export interface ApplyDeps {
  db: Db;
  clock: Clock;
  fees: FeeService;
  hooks: ApplyHooks;
  logger: Logger;
  checkCustom: RuleInput['checkCustom'];
}

const unique = (xs: readonly string[]) => [...new Set(xs)].sort();

export const nonceError = (given: number, next: number): AppError =>
  given < next
    ? new AppError(
        Code.ABORTED,
        `nonce ${given} was already used (replayed); the wallet's next nonce is ${next}`,
      )
    : new AppError(
        Code.ABORTED,
        `nonce ${given} is out of order; the wallet's next nonce is ${next}`,
      );

export const insufficientBalance = (feeWei: bigint): AppError =>
  new AppError(
    Code.FAILED_PRECONDITION,
    `insufficient balance: the action costs ${feeWei} wei`,
    { fee_wei: feeWei.toString() },
    402,
  );

/** The balance did not cover the group's fees when it was debited under lock. */
class BalanceShort extends Error {}

/**
 * Applies one organization's verified actions in ONE transaction (design.md §8): lock the
 * signer wallets, then the objects (each by id, so groups never deadlock); run the checks in
 * memory in nonce order, dropping the refused actions; write everything that passed with
 * set-based statements; last, debit the organization's balance (its row lock is what
 * concurrent groups of one organization share, so it is held only until the commit).
 * If the transaction still fails — the balance ran short under a concurrent group, or a
 * statement failed — the group is retried one action at a time so a failing action fails
 * alone.
 */
export async function applyGroup(
  deps: ApplyDeps,
  orgId: string,
  items: readonly VerifiedAction[],
): Promise<ApplyOutcome[]> {
  try {
    return await deps.db.transaction((tx) => runGroup(tx, deps, orgId, items));
  } catch (err) {
    if (items.length > 1) {
      deps.logger.warn({ err, size: items.length }, 'group commit failed; applying one by one');
      const out: ApplyOutcome[] = [];
      for (const item of items) out.push(...(await applyGroup(deps, orgId, [item])));
      return out;
    }
    if (err instanceof BalanceShort) {
      return [{ ok: false, error: insufficientBalance(await deps.fees.totalWei()) }];
    }
    if (err instanceof AppError) return [{ ok: false, error: err }];
    deps.logger.error({ err }, 'applying an action failed');
    return [{ ok: false, error: new AppError(Code.INTERNAL, 'internal error') }];
  }
}

function isMint(v: VerifiedAction): boolean {
  return v.action.name === 'mint';
}

async function runGroup(
  tx: Executor,
  deps: ApplyDeps,
  orgId: string,
  items: readonly VerifiedAction[],
): Promise<ApplyOutcome[]> {
  const now = deps.clock.now();
  const feeWei = await deps.fees.totalWei();
  const outcomes: ApplyOutcome[] = new Array<ApplyOutcome>(items.length);

  const mintTemplateIds = unique(
    items.filter(isMint).map((i) => (i.action.params as MintParams).template_id),
  );
  const inputs = await lockGroupInputs(
    tx,
    orgId,
    unique(items.map((i) => i.walletId)),
    mintTemplateIds,
  );
  let balance = inputs.balance;
  if (balance === null) return items.map(() => ({ ok: false, error: notFound('organization') }));
  const expected = inputs.nonces;
  const objectIds = unique(
    items.filter((i) => !isMint(i)).map((i) => (i.action.params as ObjectParams).object_id),
  );
  const objects = new Map((await lockObjects(tx, objectIds)).map((o) => [o.id, o]));
  const templates = new Map(inputs.templates.map((t) => [t.id, t]));
  const missingTemplates = unique([...objects.values()].map((o) => o.template_id)).filter(
    (id) => !templates.has(id),
  );
  for (const t of await findTemplates(tx, missingTemplates)) templates.set(t.id, t);
  const crossOrgMints = items.flatMap((i) => {
    const t = isMint(i) ? templates.get((i.action.params as MintParams).template_id) : undefined;
    return t && t.organization_id !== orgId
      ? [{ orgId: t.organization_id, walletId: i.walletId }]
      : [];
  });
  const roles = await findRoles(tx, crossOrgMints);

  const applied: AppliedAction[] = [];
  const write: GroupWrite = {
    newObjects: [],
    changedObjects: [],
    logs: [],
    nonces: [],
    signCounts: [],
  };
  const ledger: { id: string; ref_id: string }[] = [];
  let totalFeeWei = 0n;
  const startNonces = new Map(expected);
  const changed = new Set<string>();

  // Arrival order, except that an action whose nonce is ahead waits (within the group) for
  // the wallet's earlier nonces: consecutive nonces apply in order however they arrived.
  const waiting = new Map<string, number[]>();
  const queue = items.map((_, i) => i);
  for (let q = 0; q < queue.length; q++) {
    const idx = queue[q]!;
    const item = items[idx]!;
    const refuse = (error: AppError) => {
      outcomes[idx] = { ok: false, error };
    };
    const next = expected.get(item.walletId);
    if (next === undefined) {
      refuse(notFound('wallet'));
      continue;
    }
    if (item.action.nonce > next) {
      const w = waiting.get(item.walletId) ?? [];
      w.push(idx);
      waiting.set(item.walletId, w);
      continue;
    }
    if (item.action.nonce < next) {
      refuse(nonceError(item.action.nonce, next));
      continue;
    }
    const mint = isMint(item);
    const object = mint
      ? null
      : (objects.get((item.action.params as ObjectParams).object_id) ?? null);
    const template: TemplateInfo | null =
      templates.get(
        mint ? (item.action.params as MintParams).template_id : (object?.template_id ?? ''),
      ) ?? null;
    let role: Role | null = null;
    if (mint && template) {
      const r =
        template.organization_id === orgId
          ? item.signerRole
          : roles.get(`${template.organization_id} ${item.walletId}`);
      role = r !== undefined && isRole(r) ? r : null;
    }
    const result = applyAction({
      name: item.action.name,
      params: item.action.params,
      signerAddress: item.walletAddress,
      signerRoleInTemplateOrg: role,
      object,
      template,
      actionHash: item.hash,
      now,
      newObjectId: newId('object', now.getTime()),
      checkCustom: deps.checkCustom,
    });
    if (!result.ok) {
      refuse(result.error);
      continue;
    }
    if (item.maxFeeWei !== null && feeWei > item.maxFeeWei) {
      refuse(
        new AppError(
          Code.FAILED_PRECONDITION,
          `the fee ${feeWei} wei is above max_fee_wei ${item.maxFeeWei}`,
          { fee_wei: feeWei.toString() },
        ),
      );
      continue;
    }
    if (balance < feeWei) {
      refuse(insufficientBalance(feeWei));
      continue;
    }

    // Accepted: advance the in-memory state the next actions of the group see.
    balance -= feeWei;
    expected.set(item.walletId, next + 1);
    const parked = waiting.get(item.walletId);
    const due = parked?.findIndex((i) => items[i]!.action.nonce === next + 1) ?? -1;
    if (parked && due >= 0) queue.splice(q + 1, 0, ...parked.splice(due, 1));
    const obj: ObjectState = result.next;
    if (mint) write.newObjects.push(obj);
    else changed.add(obj.id);
    objects.set(obj.id, obj);

    const log: ActionLogRecord = {
      id: newId('action', now.getTime()),
      hash: item.hash,
      name: item.action.name,
      wallet: item.walletAddress,
      signature_type: item.signature.type,
      nonce: item.action.nonce,
      params: item.action.params,
      object_id: obj.id,
      template_id: obj.template_id,
      fee_wei: feeWei.toString(),
      batch_id: null,
      when_created: now.toISOString(),
    };
    write.logs.push({
      ...log,
      // Stored, not part of the record: the object's chain link this action made.
      prev_integrity_hash: obj.prev_integrity_hash,
      integrity_hash: obj.integrity_hash,
      organization_id: orgId,
      wallet_id: item.walletId,
      signature: item.signature,
    });
    ledger.push({ id: newId('ledger', now.getTime()), ref_id: log.id });
    if (item.passkey) {
      write.signCounts.push({
        id: item.passkey.credentialId,
        sign_count: item.passkey.newSignCount,
      });
    }
    totalFeeWei += feeWei;
    const a: AppliedAction = { organizationId: orgId, log, object: toObjectRecord(obj) };
    applied.push(a);
    outcomes[idx] = { ok: true, applied: a };
  }

  for (const [walletId, parked] of waiting) {
    for (const idx of parked) {
      outcomes[idx] = {
        ok: false,
        error: nonceError(items[idx]!.action.nonce, expected.get(walletId)!),
      };
    }
  }
  if (applied.length === 0) return outcomes;
  write.changedObjects = [...changed].map((id) => objects.get(id)!);
  for (const [id, start] of startNonces) {
    const end = expected.get(id)!;
    if (end !== start) write.nonces.push({ id, expected: start, next_nonce: end });
  }
  const wallets = await writeGroupState(tx, write);
  if (wallets !== write.nonces.length) {
    // Cannot happen while the rows are locked; if it does, roll back and go one by one.
    throw new Error('group commit guard failed: a nonce moved under lock');
  }
  const charged = await chargeGroup(tx, {
    orgId,
    totalFeeWei,
    ledger: ledger.map((l, i) => ({
      ...l,
      amount_wei: (-feeWei).toString(),
      after_offset_wei: (feeWei * BigInt(ledger.length - 1 - i)).toString(),
    })),
    now,
  });
  if (!charged) throw new BalanceShort();
  await deps.hooks.afterApply(tx, applied);
  return outcomes;
}
