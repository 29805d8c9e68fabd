import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, Code, forbidden, invalid, notFound } from '../../lib/errors.js';
import { missingForGrant, granterOf, type Granted } from '../../lib/grants.js';
import { isId } from '../../lib/ids.js';
import { isRole, requireOrg, type AuthContext, type Permission } from '../../lib/permissions.js';
import { listedKeyPermissions } from '../api-keys/index.js';
import { activeRoleOf } from '../members/index.js';
import { bumpPolicyVersion } from '../organizations/index.js';
import {
  BUCKETS_PER_WINDOW,
  bucketMs,
  bucketOf,
  capsUse,
  emptyRing,
  windowUse,
  type TargetType,
} from './gate.js';
import { looserLimits } from './looser.js';
import {
  countPolicies,
  deletePolicy,
  findPolicy,
  insertPolicy,
  listPolicies,
  readUsage,
  ruleOf,
  updatePolicy,
  type PolicyRow,
  type PolicyValues,
  type UseRead,
} from './repo.js';
import {
  MAX_POLICIES,
  type CreatePolicyInput,
  type Policy,
  type PolicyLimitsInput,
} from './schema.js';
import type { PolicyStates } from './states.js';
import { newId } from '../../lib/ids.js';

/** What policies ask of sign-in (auth's sessions; src/container.ts wires it). */
export interface PolicySessions {
  /**
   * Refuses (403 code 7) a caller with a session whose sign-in is not recent; an API key
   * passes (docs/auth.md, "Changing credentials").
   */
  requireRecentSignInOrKey(exec: Executor, auth: AuthContext, action: string): Promise<void>;
}

const TARGET_KIND = { wallet: 'wallet', api_key: 'apiKey', template: 'template' } as const;
const TARGET_NAME = { wallet: 'wallet', api_key: 'API key', template: 'template' } as const;

/**
 * Spend policies (docs/policies.md): create, read, replace, delete. A policy is a grant: it
 * limits what its target may spend, and changing or removing it gives that back, so every
 * change is bounded by the caller as a grant is (src/lib/grants.ts): a policy on a member
 * wallet needs everything that wallet's role holds (and the owner role only an owner), one
 * on an API key everything the key holds, and one on the whole organization or on a template
 * binds the owners too, so only an owner (a person) sets it. Nobody changes a policy that
 * binds itself, except an owner. Each change moves the organization's policy version under
 * its row lock, so the event bus never applies an action against a set that has changed.
 * Lifting a limit (deleting a policy, or replacing its limits with looser ones) needs a
 * recent sign-in of a session caller: a stolen console token must not be enough to spend
 * without limit while it lasts (docs/policies.md, "Lifting a limit").
 */
export class PolicyService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly states: PolicyStates,
    private readonly sessions: PolicySessions,
  ) {}

  async list(auth: AuthContext): Promise<{ policies: Policy[] }> {
    const orgId = requireOrg(auth);
    const rows = await listPolicies(this.db, orgId);
    const usage = rows.some((r) => capsUse(ruleOf(r))) ? await readUsage(this.db, orgId) : null;
    return { policies: rows.map((r) => this.view(r, usage)) };
  }

  async get(auth: AuthContext, id: string): Promise<Policy> {
    const orgId = requireOrg(auth);
    const row = await findPolicy(this.db, orgId, id);
    if (!row) throw notFound('policy');
    return this.view(row, capsUse(ruleOf(row)) ? await readUsage(this.db, orgId) : null);
  }

  async create(auth: AuthContext, body: CreatePolicyInput): Promise<Policy> {
    const orgId = requireOrg(auth);
    const targetType = body.target_type as TargetType;
    const targetId = body.target_id ?? null;
    if (targetType === 'organization') {
      if (targetId !== null) {
        throw invalid('an organization policy names no target_id', [
          { field: 'target_id', reason: 'not allowed for target_type organization' },
        ]);
      }
    } else if (targetId === null || !isId(TARGET_KIND[targetType], targetId)) {
      throw invalid(`target_id must be a ${TARGET_NAME[targetType]} id`, [
        { field: 'target_id', reason: `a ${targetType} id` },
      ]);
    }
    const values = limitsOf(body);
    const id = newId('policy');
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      if (!(await bumpPolicyVersion(tx, orgId))) throw notFound('organization');
      await this.bound(tx, auth, orgId, targetType, targetId);
      if ((await countPolicies(tx, orgId)) >= MAX_POLICIES) {
        throw new AppError(
          Code.RESOURCE_EXHAUSTED,
          `an organization holds at most ${MAX_POLICIES} policies`,
          { max_policies: MAX_POLICIES },
        );
      }
      await insertPolicy(tx, {
        ...values,
        id,
        orgId,
        targetType,
        targetId,
        byWallet: auth.walletId,
        byKey: auth.apiKeyId,
        byOwner: granterOf(auth).owner,
        now,
      });
    });
    this.states.forget(orgId);
    return this.get(auth, id);
  }

  async replace(auth: AuthContext, id: string, body: PolicyLimitsInput): Promise<Policy> {
    const orgId = requireOrg(auth);
    const values = limitsOf(body);
    await this.db.transaction(async (tx) => {
      if (!(await bumpPolicyVersion(tx, orgId))) throw notFound('organization');
      const row = await findPolicy(tx, orgId, id, true);
      if (!row) throw notFound('policy');
      await this.bound(tx, auth, orgId, row.target_type, row.target_id, {
        setByOwner: row.set_by_owner,
      });
      // Compared with the row as locked: a change committed meanwhile (a tightening) is what
      // these limits are measured against, so sending the older ones again cannot undo it.
      const looser = looserLimits(row, values);
      if (looser.length > 0) {
        await this.sessions.requireRecentSignInOrKey(
          tx,
          auth,
          `loosen a spend policy's ${looser.join(', ')}`,
        );
      }
      const byOwner = granterOf(auth).owner;
      await updatePolicy(tx, orgId, id, { ...values, byOwner }, this.clock.now());
    });
    this.states.forget(orgId);
    return this.get(auth, id);
  }

  async delete(auth: AuthContext, id: string): Promise<void> {
    const orgId = requireOrg(auth);
    await this.db.transaction(async (tx) => {
      if (!(await bumpPolicyVersion(tx, orgId))) throw notFound('organization');
      const row = await findPolicy(tx, orgId, id, true);
      if (!row) throw notFound('policy');
      await this.bound(tx, auth, orgId, row.target_type, row.target_id, {
        removing: true,
        setByOwner: row.set_by_owner,
      });
      await this.sessions.requireRecentSignInOrKey(tx, auth, 'delete a spend policy');
      await deletePolicy(tx, orgId, id);
    });
    this.states.forget(orgId);
  }

  /**
   * The ceiling: the caller must hold what the policy's target holds (see the class).
   * `removing`: the policy is being deleted, and a target that is gone does not make it
   * undeletable (docs/policies.md, "A policy whose target is gone"): one on a deleted or
   * expired API key (which never acts again) needs only the route's permission; one on a
   * wallet that is no longer a member (it may be invited again) is an owner's to remove.
   * `setByOwner`: an owner set the policy's limits, so only an owner changes or removes them
   * (two admins cannot lift each other's limits).
   */
  private async bound(
    tx: Executor,
    auth: AuthContext,
    orgId: string,
    targetType: TargetType,
    targetId: string | null,
    opts: { removing?: boolean; setByOwner?: boolean } = {},
  ): Promise<void> {
    let granted: Granted;
    let what: string;
    if (targetType === 'wallet') {
      const role = await activeRoleOf(tx, orgId, targetId!);
      if ((role === null || !isRole(role)) && opts.removing) {
        return this.ceiling(auth, { role: 'owner' }, "a removed member's wallet");
      }
      if (role === null || !isRole(role)) throw notFound('member wallet');
      // Its own wallet: in person, or through a key it made (a key acts for its creator's
      // wallet, whose policy binds the actions it signs). Only an owner, in person, may.
      if (auth.walletId === targetId && !(auth.kind === 'user' && auth.role === 'owner')) {
        throw forbidden('a policy that binds you is changed by someone else');
      }
      granted = { role };
      what = `a ${role}'s wallet`;
    } else if (targetType === 'api_key') {
      const perms = await listedKeyPermissions(tx, orgId, targetId!, this.clock.now());
      if (perms === null && opts.removing) return;
      if (perms === null) throw notFound('api key');
      if (auth.apiKeyId === targetId) {
        throw forbidden('a policy that binds you is changed by someone else');
      }
      granted = { permissions: [...perms] };
      what = 'this API key';
    } else {
      // The whole organization, or every action on a template: the owners are bound too.
      granted = { role: 'owner' };
      what = targetType === 'organization' ? 'the organization' : 'a template';
    }
    this.ceiling(auth, granted, what, opts.setByOwner === true);
  }

  /**
   * Refuses (403 code 7) a caller who does not hold `granted` (the owner role: an owner), or
   * who is not an owner when an owner set the policy (`setByOwner`).
   */
  private ceiling(auth: AuthContext, granted: Granted, what: string, setByOwner = false): void {
    const granter = granterOf(auth);
    const missing: Permission[] = missingForGrant(granter, granted);
    const bindsOwners = 'role' in granted && granted.role === 'owner' && !granter.owner;
    const ownersOwn = setByOwner && !granter.owner;
    const ownerOnly = bindsOwners || ownersOwn;
    if (missing.length > 0 || ownerOnly) {
      const reasons = [
        ...(bindsOwners ? ['it binds owners, so only an owner sets it'] : []),
        ...(ownersOwn ? ['an owner set it, so only an owner changes or removes it'] : []),
        ...(missing.length > 0 ? [`you lack ${missing.join(', ')}`] : []),
      ];
      throw new AppError(
        Code.PERMISSION_DENIED,
        `cannot set a policy on ${what}: ${reasons.join('; ')}`,
        { missing_permissions: missing, ...(ownerOnly ? { owner_only: true } : {}) },
      );
    }
  }

  /** `read`: the use, with the database's time, where the window ends (as the checks end it). */
  private view(r: PolicyRow, read: UseRead | null): Policy {
    const rule = ruleOf(r);
    let use: Policy['usage'] = null;
    if (capsUse(rule)) {
      const bucket = bucketOf(rule.period!, read?.now ?? this.clock.now());
      const u = windowUse(read?.usage.get(r.id) ?? emptyRing(), bucket);
      use = {
        period: rule.period!,
        window_start: new Date(
          (bucket - BUCKETS_PER_WINDOW) * bucketMs(rule.period!),
        ).toISOString(),
        spent_wei: u.spent.toString(),
        actions: u.actions,
      };
    }
    return {
      id: r.id,
      organization_id: r.organization_id,
      name: r.name,
      target_type: r.target_type,
      target_id: r.target_id,
      period: r.period,
      spend_cap_wei: r.spend_cap_wei,
      max_actions: r.max_actions,
      allowed_actions: r.allowed_actions,
      denied_actions: r.denied_actions,
      allowed_templates: r.allowed_templates,
      denied_templates: r.denied_templates,
      max_fee_wei: r.max_fee_wei,
      set_by_owner: r.set_by_owner,
      usage: use,
      created_at: r.created_at.toISOString(),
      updated_at: r.updated_at.toISOString(),
    };
  }
}

/** The limits as stored; a cap needs a period, a period a cap, and something must be limited. */
function limitsOf(b: PolicyLimitsInput): PolicyValues {
  const v: PolicyValues = {
    name: b.name,
    period: b.period ?? null,
    spend_cap_wei: b.spend_cap_wei ?? null,
    max_actions: b.max_actions ?? null,
    allowed_actions: b.allowed_actions ?? null,
    denied_actions: b.denied_actions ?? null,
    allowed_templates: b.allowed_templates ?? null,
    denied_templates: b.denied_templates ?? null,
    max_fee_wei: b.max_fee_wei ?? null,
  };
  const capped = v.spend_cap_wei !== null || v.max_actions !== null;
  if (capped && v.period === null) {
    throw invalid('spend_cap_wei and max_actions need a period', [
      { field: 'period', reason: 'required with spend_cap_wei or max_actions' },
    ]);
  }
  if (!capped && v.period !== null) {
    throw invalid('a period needs spend_cap_wei or max_actions', [
      { field: 'period', reason: 'only with spend_cap_wei or max_actions' },
    ]);
  }
  const { name: _, period: __, ...limits } = v;
  if (Object.values(limits).every((x) => x === null)) {
    throw invalid('a policy sets at least one limit', [
      {
        field: 'spend_cap_wei',
        reason: 'or max_actions, the action or template lists, max_fee_wei',
      },
    ]);
  }
  return v;
}
