import type { SQL } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db, Executor } from '../../db/pool.js';
import type { RowRunner } from '../../db/prepared.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, Code, notFound } from '../../lib/errors.js';
import type { FeeService } from './fees.js';
import type { ApplyHooks } from './hooks.js';
import {
  groupStatement,
  GroupGuardFailed,
  lockGroupInputs,
  parseGroupInputs,
  readGroupInputsQuery,
  runGroupStatement,
  type ReadInputs,
} from './group-write.js';
import {
  crossOrgMints,
  insufficientBalance,
  isMint,
  mintTemplateId,
  objectIdOf,
  planGroup,
  type GroupPlan,
  type GroupState,
} from './plan.js';
import { findRoles, findTemplates, lockObjects } from './repo.js';
import type { RuleInput } from './rules.js';
import type { GroupStateCache } from './state-cache.js';
import type { ApplyOutcome, ObjectState, TemplateInfo, VerifiedAction } from './types.js';

export { insufficientBalance, nonceError } from './plan.js';

export interface ApplyDeps {
  db: Db;
  /** Named prepared statements on the pool (the optimistic path's two statements). */
  prepared: RowRunner;
  clock: Clock;
  fees: FeeService;
  hooks: ApplyHooks;
  logger: Logger;
  checkCustom: RuleInput['checkCustom'];
  cache: GroupStateCache;
}

const unique = (xs: readonly string[]) => [...new Set(xs)].sort();

/**
 * Applies one organization's verified actions (design.md §8) with ONE guarded statement
 * (group-write.ts). First optimistically: the state comes from what the committer
 * remembers (state-cache.ts), with one unlocked read for what it lacks, and the statement
 * commits on its own — one round trip for a group whose state is remembered. When that
 * cannot give the answer (a guard did not hold, an action would be refused, a cross-
 * organization mint), the locked path decides: it locks the wallets and objects, reads
 * afresh and runs the same checks and statement in a transaction.
 */
export async function applyGroup(
  deps: ApplyDeps,
  orgId: string,
  items: readonly VerifiedAction[],
): Promise<ApplyOutcome[]> {
  return (await applyOptimistic(deps, orgId, items)) ?? applyLocked(deps, orgId, items);
}

/** The templates a plan's checks read, for the statement's guard and the cache. */
function templatesOf(state: GroupState): TemplateInfo[] {
  return [...state.templates.values()];
}

function statementOf(deps: ApplyDeps, orgId: string, state: GroupState, plan: GroupPlan): SQL {
  return groupStatement(
    plan.write,
    { ...plan.charge, orgId, now: state.now },
    templatesOf(state),
    deps.hooks.writes(plan.applied),
  );
}

function remember(
  deps: ApplyDeps,
  orgId: string,
  state: GroupState,
  plan: GroupPlan,
  balance: bigint,
) {
  deps.cache.remember({
    orgId,
    balance,
    nonces: plan.write.nonces.map((n) => [n.id, n.next_nonce]),
    objects: [...plan.write.newObjects, ...plan.write.changedObjects].map(
      ({ expected_version: _, ...o }: ObjectState & { expected_version?: number }) => o,
    ),
    templates: templatesOf(state),
  });
}

/**
 * The optimistic path: answers the outcomes when every action of the group was applied,
 * or null (nothing written) when the locked path must decide.
 */
async function applyOptimistic(
  deps: ApplyDeps,
  orgId: string,
  items: readonly VerifiedAction[],
): Promise<ApplyOutcome[] | null> {
  const { cache } = deps;
  const walletIds = unique(items.map((i) => i.walletId));
  const objectIds = unique(items.filter((i) => !isMint(i)).map(objectIdOf));
  const nonces = new Map<string, number>();
  const objects = new Map<string, ObjectState>();
  const templates = new Map<string, TemplateInfo>();
  let balance = cache.balances.get(orgId);
  const lacking = { wallets: [] as string[], objects: [] as string[], templates: [] as string[] };
  for (const id of walletIds) {
    const n = cache.nonces.get(id);
    if (n === undefined) lacking.wallets.push(id);
    else nonces.set(id, n);
  }
  for (const id of objectIds) {
    const o = cache.objects.get(id);
    if (o === undefined) lacking.objects.push(id);
    else objects.set(id, o);
  }
  const templateIds = unique([
    ...items.filter(isMint).map(mintTemplateId),
    ...[...objects.values()].map((o) => o.template_id),
  ]);
  for (const id of templateIds) {
    const t = cache.templates.get(id);
    if (t === undefined) lacking.templates.push(id);
    else templates.set(id, t);
  }
  const feeWei = await deps.fees.totalWei();
  try {
    if (
      balance === undefined ||
      lacking.wallets.length + lacking.objects.length + lacking.templates.length > 0
    ) {
      const [row] = await deps.prepared<Parameters<typeof parseGroupInputs>[0]>(
        readGroupInputsQuery(orgId, lacking.wallets, lacking.objects, lacking.templates),
      );
      const read: ReadInputs = parseGroupInputs(row!);
      if (read.balance === null) return null; // no such organization: the locked path says so
      balance = read.balance;
      for (const [id, n] of read.nonces) nonces.set(id, n);
      for (const o of read.objects) objects.set(o.id, o);
      for (const t of read.templates) templates.set(t.id, t);
    }
    if (crossOrgMints(orgId, items, templates).length > 0) return null;
    const state: GroupState = {
      now: deps.clock.now(),
      feeWei,
      balance,
      nonces,
      objects,
      templates,
      roles: new Map(),
    };
    const plan = planGroup(orgId, items, state, deps.checkCustom);
    // A refusal is only given on state read under lock.
    if (plan.refused > 0) return null;
    const left = await runGroupStatement(
      (q) => deps.prepared(q),
      statementOf(deps, orgId, state, plan),
    );
    remember(deps, orgId, state, plan, left);
    return plan.outcomes;
  } catch (err) {
    cache.forget(orgId, walletIds, objectIds);
    if (!(err instanceof GroupGuardFailed)) {
      deps.logger.debug({ err }, 'optimistic group failed; taking the locked path');
    }
    return null;
  }
}

/**
 * The locked path: one transaction that locks the signer wallets and the objects (each by
 * id, so groups never deadlock), reads the state afresh, runs the checks and writes what
 * passed. If the statement still fails — the balance ran short under a concurrent group, or
 * a write failed — the group is retried one action at a time so a failing action fails alone.
 */
async function applyLocked(
  deps: ApplyDeps,
  orgId: string,
  items: readonly VerifiedAction[],
): Promise<ApplyOutcome[]> {
  try {
    const done = await deps.db.transaction((tx) => runLocked(tx, deps, orgId, items));
    if (done.committed) {
      remember(deps, orgId, done.state, done.committed.plan, done.committed.balance);
    }
    return done.outcomes;
  } catch (err) {
    if (items.length > 1) {
      deps.logger.warn({ err, size: items.length }, 'group commit failed; applying one by one');
      const out: ApplyOutcome[] = [];
      for (const item of items) out.push(...(await applyLocked(deps, orgId, [item])));
      return out;
    }
    if (err instanceof GroupGuardFailed && err.balanceShort) {
      return [{ ok: false, error: insufficientBalance(await deps.fees.totalWei()) }];
    }
    if (err instanceof AppError) return [{ ok: false, error: err }];
    deps.logger.error({ err }, 'applying an action failed');
    return [{ ok: false, error: new AppError(Code.INTERNAL, 'internal error') }];
  }
}

interface LockedResult {
  outcomes: ApplyOutcome[];
  state: GroupState;
  committed: { plan: GroupPlan; balance: bigint } | null;
}

async function runLocked(
  tx: Executor,
  deps: ApplyDeps,
  orgId: string,
  items: readonly VerifiedAction[],
): Promise<LockedResult> {
  const now = deps.clock.now();
  const feeWei = await deps.fees.totalWei();
  const inputs = await lockGroupInputs(
    tx,
    orgId,
    unique(items.map((i) => i.walletId)),
    unique(items.filter(isMint).map(mintTemplateId)),
  );
  const objectIds = unique(items.filter((i) => !isMint(i)).map(objectIdOf));
  const objects = new Map((await lockObjects(tx, objectIds)).map((o) => [o.id, o]));
  const templates = new Map(inputs.templates.map((t) => [t.id, t]));
  const missingTemplates = unique([...objects.values()].map((o) => o.template_id)).filter(
    (id) => !templates.has(id),
  );
  for (const t of await findTemplates(tx, missingTemplates)) templates.set(t.id, t);
  const state: GroupState = {
    now,
    feeWei,
    balance: inputs.balance ?? 0n,
    nonces: inputs.nonces,
    objects,
    templates,
    roles: await findRoles(tx, crossOrgMints(orgId, items, templates)),
  };
  if (inputs.balance === null) {
    return {
      outcomes: items.map(() => ({ ok: false, error: notFound('organization') })),
      state,
      committed: null,
    };
  }
  const plan = planGroup(orgId, items, state, deps.checkCustom);
  if (plan.applied.length === 0) return { outcomes: plan.outcomes, state, committed: null };
  const balance = await runGroupStatement(
    async (q) => (await tx.execute<{ balance: string | null }>(q)).rows,
    statementOf(deps, orgId, state, plan),
  );
  return { outcomes: plan.outcomes, state, committed: { plan, balance } };
}
