import { TtlCache } from '../../lib/ttl-cache.js';
import type { TemplateInfo } from '../objects/index.js';
import type { ObjectState } from '../objects/index.js';

/** How long remembered state is used before it is read again (guards make it safe anyway). */
const REMEMBER_MS = 60_000;

/**
 * What the group committer remembers of the state its groups read and wrote: each wallet's
 * next nonce, objects, templates and each organization's balance after its last group. The
 * optimistic path checks a group against it instead of reading the database first
 * (apply-group.ts). It is never trusted for a write or a refusal: every write it leads to is
 * guarded by the remembered value in the group's statement, and any doubt (a guard that did
 * not hold, an action it would refuse) sends the group to the locked path, which reads
 * afresh and refreshes it. So another instance writing the same rows costs a retry, never a
 * wrong answer.
 */
export class GroupStateCache {
  readonly nonces = new TtlCache<string, number>(REMEMBER_MS, 200_000);
  readonly objects = new TtlCache<string, ObjectState>(REMEMBER_MS, 20_000);
  readonly templates = new TtlCache<string, TemplateInfo>(REMEMBER_MS, 10_000);
  readonly balances = new TtlCache<string, bigint>(REMEMBER_MS, 10_000);

  /** Records the state a committed group left behind. */
  remember(state: {
    orgId: string;
    balance: bigint;
    nonces: Iterable<[string, number]>;
    objects: Iterable<ObjectState>;
    templates: Iterable<TemplateInfo>;
  }): void {
    this.balances.set(state.orgId, state.balance);
    for (const [id, next] of state.nonces) this.nonces.set(id, next);
    for (const o of state.objects) this.objects.set(o.id, o);
    for (const t of state.templates) this.templates.set(t.id, t);
  }

  /** Forgets what a group relied on, after a guard did not hold or a statement failed. */
  forget(orgId: string, walletIds: Iterable<string>, objectIds: Iterable<string>): void {
    this.balances.delete(orgId);
    for (const id of walletIds) this.nonces.delete(id);
    for (const id of objectIds) this.objects.delete(id);
    this.templates.clear();
  }
}
