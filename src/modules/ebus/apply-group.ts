import type { Logger } from 'pino';
import type { Db, Executor } from '../../db/pool.js';
import { rowsVia, type RowRunner } from '../../db/prepared.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, Code, notFound, unavailable } from '../../lib/errors.js';
import { isDatabaseUnavailable } from '../../lib/pg-errors.js';
import type { ObjectRules, ObjectState, TemplateInfo } from '../objects/index.js';
import type { PolicySet, PolicyStates } from '../policies/index.js';
import type { FeeService } from './fees.js';
import type { ApplyHooks } from './hooks.js';
import { liveCredentials, lockGroupInputs, readGroupInputs } from './repo/group-read.js';
import {
  groupStatement,
  GroupGuardFailed,
  runGroupStatement,
  type GroupWrite,
} from './repo/group-write.js';
import {
  crossOrgMints,
  insufficientBalance,
  isMint,
  mintTemplateId,
  objectIdOf,
} from './group-items.js';
import { planGroup, type GroupPlan, type GroupState } from './plan.js';
import { findRoles, findTemplates, lockObjects } from './repo/lookups.js';
import type { GroupStateCache } from './state-cache.js';
import type { ApplyOutcome, VerifiedAction } from './types.js';

export interface ApplyDeps {
  db: Db;
  /** Named prepared statements on the pool (the optimistic path's two statements). */
  prepared: RowRunner;
  clock: Clock;
  fees: FeeService;
  hooks: ApplyHooks;
  logger: Logger;
  /** What objects decide: the rule of each action, the record of an object. */
  rules: ObjectRules;
  cache: GroupStateCache;
  /** Spend policies (docs/policies.md); without it none are checked. */
  policies?: PolicyStates;
}

/** One organization's actions within a group. */
interface Share {
  orgId: string;
  items: VerifiedAction[];
}

/** A share whose checks passed, ready to be written. */
interface Planned {
  orgId: string;
  state: GroupState;
  plan: GroupPlan;
}

const unique = (xs: Iterable<string>) => [...new Set(xs)].sort();
const walletsOf = (items: readonly VerifiedAction[]) => unique(items.map((i) => i.walletId));
const objectsOf = (items: readonly VerifiedAction[]) =>
  unique(items.filter((i) => !isMint(i)).map(objectIdOf));

/**
 * Applies a group of verified actions, of one or several organizations (docs/ebus.md, "Inside"),
 * with ONE guarded statement (repo/group-write.ts). First optimistically: the state comes from
 * what the committer remembers (state-cache.ts), with one unlocked read for what it lacks,
 * and every organization whose share passes its checks is written by one statement that
 * commits on its own — one round trip for a group whose state is remembered. A share the
 * optimistic path cannot answer for (an action it would refuse, a cross-organization mint,
 * or a guard that did not hold) goes to the locked path, which locks that organization's
 * wallets and objects, reads afresh and decides.
 *
 * The group committer (group-commit.ts) is given one and calls `apply` for each group.
 */
export class GroupApplier {
  constructor(private readonly deps: ApplyDeps) {}

  /** One outcome per item, in order. */
  apply(items: readonly VerifiedAction[]): Promise<ApplyOutcome[]> {
    return applyGroup(this.deps, items);
  }
}

async function applyGroup(
  deps: ApplyDeps,
  items: readonly VerifiedAction[],
): Promise<ApplyOutcome[]> {
  const byOrg = new Map<string, number[]>();
  items.forEach((item, i) => {
    const at = byOrg.get(item.payerOrgId);
    if (at) at.push(i);
    else byOrg.set(item.payerOrgId, [i]);
  });
  const shares: Share[] = [...byOrg].map(([orgId, at]) => ({
    orgId,
    items: at.map((i) => items[i]!),
  }));
  const done = await applyOptimistic(deps, shares);
  await Promise.all(
    shares
      .filter((s) => !done.has(s.orgId))
      .map(async (s) => done.set(s.orgId, await applyLocked(deps, s.orgId, s.items))),
  );
  const outcomes = new Array<ApplyOutcome>(items.length);
  for (const [orgId, at] of byOrg) {
    const out = done.get(orgId)!;
    at.forEach((i, k) => (outcomes[i] = out[k]!));
  }
  return outcomes;
}

/**
 * Writes planned shares with one statement; answers each organization's balance after it,
 * and what to call once the statement has committed (the hooks' `committed`). `optimistic`
 * (the optimistic path): the statement also fails if a template switch of an organization
 * that mints committed after the state was read (the locked path holds its mints' templates
 * instead), and the hooks may rely on what they remember, guarded (hooks.ts).
 */
async function writePlanned(
  deps: ApplyDeps,
  planned: readonly Planned[],
  run: RowRunner,
  optimistic: boolean,
): Promise<{ balances: Map<string, bigint>; afterCommit: () => void }> {
  const write: GroupWrite = {
    newObjects: planned.flatMap((p) => p.plan.write.newObjects),
    changedObjects: planned.flatMap((p) => p.plan.write.changedObjects),
    logs: planned.flatMap((p) => p.plan.write.logs),
    nonces: planned.flatMap((p) => p.plan.write.nonces),
    signCounts: planned.flatMap((p) => p.plan.write.signCounts),
    credentials: planned.flatMap((p) => p.plan.write.credentials),
  };
  const templates = new Map<string, TemplateInfo>();
  for (const p of planned) for (const t of p.state.templates.values()) templates.set(t.id, t);
  const hooks = deps.hooks.writes(
    planned.flatMap((p) => p.plan.applied),
    optimistic,
  );
  const statement = groupStatement(
    write,
    planned.map((p) => ({ ...p.plan.charge, orgId: p.orgId })),
    planned[0]!.state.now,
    [...templates.values()],
    hooks,
    deps.hooks.batchJoin ?? null,
    optimistic ? planned.filter((p) => p.plan.write.newObjects.length > 0).map((p) => p.orgId) : [],
  );
  const result = await runGroupStatement(run, statement, hooks);
  for (const p of planned) {
    for (const a of p.plan.applied) {
      const overflow = result.overflow.get(a.log.id);
      a.log.batch_id = overflow === undefined ? result.batchId : overflow;
    }
  }
  const afterCommit = () => {
    try {
      result.afterCommit();
    } catch (err) {
      deps.logger.error({ err }, 'a hook failed after its group committed');
    }
  };
  return { balances: result.balances, afterCommit };
}

/** Records what committed shares left behind (their shares of one statement). */
function remember(deps: ApplyDeps, planned: readonly Planned[], left: Map<string, bigint>) {
  for (const p of planned) {
    deps.cache.remember({
      orgId: p.orgId,
      balance: left.get(p.orgId)!,
      nonces: p.plan.write.nonces.map((n) => [n.id, n.next_nonce]),
      // Objects just acted on, not those just minted: most mints are not followed by an
      // action of the same instance soon, and keeping every new object alive costs the
      // collector.
      objects: p.plan.write.changedObjects.map(({ expected_version: _, ...o }) => o),
      // The shares of one statement read one template map: record it once.
      templates: p === planned[0] ? p.state.templates.values() : [],
    });
  }
}

/** The state the optimistic path plans on: what the cache remembers, then what was read. */
interface Known {
  balances: Map<string, bigint>;
  nonces: Map<string, number>;
  objects: Map<string, ObjectState>;
  templates: Map<string, TemplateInfo>;
  /** What the cache did not remember, by kind. */
  lacking: { orgs: string[]; wallets: string[]; objects: string[]; templates: string[] };
}

/**
 * The optimistic path: the outcomes of every share it applied, by organization. Shares it
 * leaves out were not written and go to the locked path. Its steps: recall the state, read
 * what the cache lacks, plan each share, write the planned shares with one statement.
 */
async function applyOptimistic(
  deps: ApplyDeps,
  shares: readonly Share[],
): Promise<Map<string, ApplyOutcome[]>> {
  const known = recallState(deps.cache, shares);
  const feeWei = deps.fees.cachedTotalWei() ?? (await deps.fees.totalWei());
  try {
    await readLacking(deps, known);
    const policySets = await deps.policies?.recall(shares.map((s) => s.orgId));
    const planned = planShares(deps, shares, known, feeWei, policySets);
    if (planned.length === 0) return new Map();
    return await writeOptimistic(deps, planned);
  } catch (err) {
    for (const s of shares) deps.cache.forget(s.orgId, walletsOf(s.items), objectsOf(s.items));
    deps.hooks.forget?.(shares.map((s) => s.orgId));
    if (!(err instanceof GroupGuardFailed)) {
      deps.logger.debug({ err }, 'optimistic group failed; taking the locked path');
    }
    return new Map();
  }
}

/** Takes from the cache what it remembers of the shares' state, and notes what it lacks. */
function recallState(cache: GroupStateCache, shares: readonly Share[]): Known {
  const all = shares.flatMap((s) => s.items);
  const known: Known = {
    balances: new Map(),
    nonces: new Map(),
    objects: new Map(),
    templates: new Map(),
    lacking: { orgs: [], wallets: [], objects: [], templates: [] },
  };
  const { lacking } = known;
  const recall = <V>(
    ids: string[],
    from: { get(k: string): V | undefined },
    into: Map<string, V>,
    miss: string[],
  ) => {
    for (const id of ids) {
      const v = from.get(id);
      if (v === undefined) miss.push(id);
      else into.set(id, v);
    }
  };
  recall(
    shares.map((s) => s.orgId),
    cache.balances,
    known.balances,
    lacking.orgs,
  );
  recall(walletsOf(all), cache.nonces, known.nonces, lacking.wallets);
  recall(objectsOf(all), cache.objects, known.objects, lacking.objects);
  recall(
    unique([
      ...all.filter(isMint).map(mintTemplateId),
      ...[...known.objects.values()].map((o) => o.template_id),
    ]),
    cache.templates,
    known.templates,
    lacking.templates,
  );
  return known;
}

/** Reads, with one unlocked statement, what the cache lacked (nothing when it lacked nothing). */
async function readLacking(deps: ApplyDeps, known: Known): Promise<void> {
  const { lacking } = known;
  const count =
    lacking.orgs.length +
    lacking.wallets.length +
    lacking.objects.length +
    lacking.templates.length;
  if (count === 0) return;
  const read = await readGroupInputs(deps.prepared, lacking);
  for (const [id, b] of read.balances) known.balances.set(id, b);
  for (const [id, n] of read.nonces) known.nonces.set(id, n);
  for (const o of read.objects) known.objects.set(o.id, o);
  for (const t of read.templates) known.templates.set(t.id, t);
}

/**
 * Plans each share on the known state; keeps the shares the optimistic path may answer for.
 * A missing organization, a mint of another organization's template, an organization whose
 * spend policies are not remembered, or any refusal (a refusal is only given on state read
 * under lock) leaves the share to the locked path.
 */
function planShares(
  deps: ApplyDeps,
  shares: readonly Share[],
  known: Known,
  feeWei: bigint,
  policySets: Map<string, PolicySet> | undefined,
): Planned[] {
  const { nonces, objects, templates } = known;
  const now = deps.clock.now();
  const planned: Planned[] = [];
  for (const { orgId, items } of shares) {
    const balance = known.balances.get(orgId);
    if (balance === undefined || crossOrgMints(orgId, items, templates).length > 0) continue;
    const state: GroupState = {
      now,
      feeWei,
      balance,
      nonces,
      objects,
      templates,
      roles: new Map(),
    };
    const policySet = policySets?.get(orgId);
    if (policySets && !policySet) continue;
    if (policySet) state.policies = deps.policies!.gate(policySet, now);
    const plan = planGroup(orgId, items, state, deps.rules);
    if (plan.refused === 0) planned.push({ orgId, state, plan });
  }
  return planned;
}

/** Writes the planned shares with one statement on its own: it has committed when it answers. */
async function writeOptimistic(
  deps: ApplyDeps,
  planned: readonly Planned[],
): Promise<Map<string, ApplyOutcome[]>> {
  const written = await writePlanned(deps, planned, deps.prepared, true);
  written.afterCommit();
  remember(deps, planned, written.balances);
  return new Map(planned.map((p) => [p.orgId, p.plan.outcomes]));
}

/**
 * The locked path, for one organization's share: one transaction that locks the signer
 * wallets and the objects (each by id, so groups never deadlock), reads the state afresh,
 * runs the checks and writes what passed. If the statement still fails — the balance ran
 * short under a concurrent group, or a write failed — the share is retried one action at a
 * time so a failing action fails alone.
 */
async function applyLocked(
  deps: ApplyDeps,
  orgId: string,
  items: readonly VerifiedAction[],
): Promise<ApplyOutcome[]> {
  try {
    const done = await deps.db.transaction((tx) => runLocked(tx, deps, orgId, items));
    if (done.committed) {
      done.committed.afterCommit();
      remember(deps, [done.committed.planned], done.committed.left);
    }
    return done.outcomes;
  } catch (err) {
    // With the database away, no action of the share can apply: each answers 503 at once
    // instead of being retried alone against a server that is not there.
    if (isDatabaseUnavailable(err)) return items.map(() => ({ ok: false, error: unavailable() }));
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
  committed: { planned: Planned; left: Map<string, bigint>; afterCommit: () => void } | null;
}

async function runLocked(
  tx: Executor,
  deps: ApplyDeps,
  orgId: string,
  items: readonly VerifiedAction[],
): Promise<LockedResult> {
  const now = deps.clock.now();
  const feeWei = deps.fees.cachedTotalWei() ?? (await deps.fees.totalWei());
  const inputs = await lockGroupInputs(
    tx,
    orgId,
    walletsOf(items),
    unique(items.filter(isMint).map(mintTemplateId)),
  );
  const balance = inputs.balances.get(orgId);
  if (balance === undefined) {
    return {
      outcomes: items.map(() => ({ ok: false, error: notFound('organization') })),
      committed: null,
    };
  }
  // A statement of its own, after the wallets are locked: a removal holds the wallet's lock
  // until it commits, and only a new statement's snapshot sees what it committed.
  const live = await liveCredentials(
    tx,
    items.flatMap((i) => (i.credential ? [{ walletId: i.walletId, ...i.credential }] : [])),
  );
  const objects = new Map((await lockObjects(tx, objectsOf(items))).map((o) => [o.id, o]));
  const templates = new Map(inputs.templates.map((t) => [t.id, t]));
  const missingTemplates = unique([...objects.values()].map((o) => o.template_id)).filter(
    (id) => !templates.has(id),
  );
  for (const t of await findTemplates(tx, missingTemplates)) templates.set(t.id, t);
  // Last of the locks (the organization's row, as the statement's debit takes it last). The
  // policies' windows end at the database's time, read with their use under that lock.
  const policies = deps.policies ? await deps.policies.lock(tx, orgId, now) : null;
  const state: GroupState = {
    now,
    feeWei,
    balance,
    nonces: inputs.nonces,
    objects,
    templates,
    roles: await findRoles(tx, crossOrgMints(orgId, items, templates)),
    liveCredentials: live,
    ...(policies ? { policies } : {}),
  };
  const plan = planGroup(orgId, items, state, deps.rules);
  if (plan.applied.length === 0) return { outcomes: plan.outcomes, committed: null };
  const planned = { orgId, state, plan };
  const { balances: left, afterCommit } = await writePlanned(deps, [planned], rowsVia(tx), false);
  return { outcomes: plan.outcomes, committed: { planned, left, afterCommit } };
}
