import { AppError, Code, notFound, unauthenticated } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { isRole, type Role } from '../../lib/permissions.js';
import { applyAction } from '../objects/actions/index.js';
import type { MintParams, ObjectParams } from '../objects/actions/params.js';
import type { RuleInput, TemplateInfo } from '../objects/actions/types.js';
import { toObjectRecord, type ObjectState } from '../objects/record.js';
import type { GroupCharge, GroupWrite } from './repo/group-write.js';
import type { SignatureBody } from './schema.js';
import type {
  ActionLogRecord,
  AppliedAction,
  ApplyOutcome,
  SigningCredential,
  VerifiedAction,
} from './types.js';

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
}

/** A group's checks done: who is refused, and what the accepted actions write. */
export interface GroupPlan {
  outcomes: ApplyOutcome[];
  applied: AppliedAction[];
  refused: number;
  write: GroupWrite;
  charge: Omit<GroupCharge, 'orgId'>;
}

/** A signing credential of a wallet, as one string (GroupState.liveCredentials). */
export const credentialKey = (walletId: string, c: SigningCredential): string =>
  `${walletId} ${c.type} ${c.externalId}`;

export const removedCredential = (): AppError =>
  unauthenticated('the signature comes from a credential that was removed');

export const isMint = (v: VerifiedAction): boolean => v.action.name === 'mint';

export const mintTemplateId = (v: VerifiedAction): string =>
  (v.action.params as MintParams).template_id;

export const objectIdOf = (v: VerifiedAction): string =>
  (v.action.params as ObjectParams).object_id;

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

/** Mints whose template belongs to another organization: their signer's role there. */
export function crossOrgMints(
  orgId: string,
  items: readonly VerifiedAction[],
  templates: ReadonlyMap<string, TemplateInfo>,
): { orgId: string; walletId: string }[] {
  return items.flatMap((i) => {
    const t = isMint(i) ? templates.get(mintTemplateId(i)) : undefined;
    return t && t.organization_id !== orgId
      ? [{ orgId: t.organization_id, walletId: i.walletId }]
      : [];
  });
}

/**
 * Runs the checks of a group in memory (design.md §8), in arrival order, against the state
 * read before it, each accepted action seeing the ones before it: nonce, rights, custom
 * data, price and balance. No I/O: the locked path and the optimistic path of the group
 * committer both run it, and differ only in how they read the state and guard the writes.
 */
export function planGroup(
  orgId: string,
  items: readonly VerifiedAction[],
  state: GroupState,
  checkCustom: RuleInput['checkCustom'],
): GroupPlan {
  const { now, feeWei } = state;
  let balance = state.balance;
  const expected = new Map(state.nonces);
  const objects = new Map(state.objects);
  const outcomes = new Array<ApplyOutcome>(items.length);
  const applied: AppliedAction[] = [];
  const write: GroupWrite = {
    newObjects: [],
    changedObjects: [],
    logs: [],
    nonces: [],
    signCounts: [],
    credentials: [],
  };
  const ledger: GroupCharge['ledger'] = [];
  const changed = new Map<string, number>(); // object id → version before the group
  const signers = new Set<string>(); // credential keys already in write.credentials
  let refused = 0;

  // Arrival order, except that an action whose nonce is ahead waits (within the group) for
  // the wallet's earlier nonces: consecutive nonces apply in order however they arrived.
  const waiting = new Map<string, number[]>();
  const queue = items.map((_, i) => i);
  for (let q = 0; q < queue.length; q++) {
    const idx = queue[q]!;
    const item = items[idx]!;
    const refuse = (error: AppError) => {
      outcomes[idx] = { ok: false, error };
      refused++;
    };
    const next = expected.get(item.walletId);
    if (next === undefined) {
      refuse(notFound('wallet'));
      continue;
    }
    const live = state.liveCredentials;
    if (item.credential && live && !live.has(credentialKey(item.walletId, item.credential))) {
      refuse(removedCredential());
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
    const object = mint ? null : (objects.get(objectIdOf(item)) ?? null);
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
      checkCustom,
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
    else if (!changed.has(obj.id)) changed.set(obj.id, object!.version);
    objects.set(obj.id, obj);

    const log: ActionLogRecord = {
      id: newId('action', now.getTime()),
      hash: item.hash,
      name: item.action.name,
      wallet: item.walletAddress,
      organization_id: orgId,
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
    write.logs.push({
      ...log,
      // Stored, not part of the record: the object's chain link this action made.
      prev_integrity_hash: obj.prev_integrity_hash,
      integrity_hash: obj.integrity_hash,
      wallet_id: item.walletId,
    });
    ledger.push({
      id: newId('ledger', now.getTime()),
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
      if (!signers.has(key)) {
        signers.add(key);
        write.credentials.push({
          wallet_id: item.walletId,
          type: item.credential.type,
          external_id: item.credential.externalId,
        });
      }
    }
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
      refused++;
    }
  }
  write.changedObjects = [...changed].map(([id, version]) => ({
    ...objects.get(id)!,
    expected_version: version,
  }));
  for (const [id, start] of state.nonces) {
    const end = expected.get(id)!;
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
    outcomes,
    applied,
    refused,
    write,
    charge: { totalFeeWei: feeWei * BigInt(ledger.length), ledger },
  };
}

/** The signature as the action log publishes it (design.md §6). */
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
