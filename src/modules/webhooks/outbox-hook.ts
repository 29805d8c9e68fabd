import { newId } from '../../lib/ids.js';
import { SealedSecretError, type SecretSealer } from '../../lib/sealed-secret.js';
import { tracing } from '../../lib/tracing.js';
import { TtlCache } from '../../lib/ttl-cache.js';
import type { ApplyHooks, HookStatement } from '../ebus/index.js';
import type { AppliedAction } from '../ebus/index.js';
import { LEASE_MS } from './delivery-runner.js';
import { previousKeyAt, signingKeyAt } from './keys.js';
import type { DeliveryHandoff, HandedDelivery } from './handoff.js';
import {
  handedRows,
  noActiveWebhooks,
  outboxInsert,
  withActiveWebhooks,
  type HandedRow,
  type OutboxAction,
} from './repo/outbox.js';
import { MAX_WEBHOOKS } from './schema.js';

/**
 * The webhooks' part of the event bus's group statement: the matching deliveries are
 * written in the actions' own transaction, so an action that commits has its deliveries
 * queued and one that rolls back has none (docs/webhooks.md, top: a crash loses nothing).
 * Matching runs in SQL against the webhooks as committed, so a webhook saved on any
 * instance applies to the next action everywhere. When this process's worker takes handed
 * deliveries (handoff.ts), the rows are written claimed for it and handed over once the
 * group has committed. The keys the statement reads back are opened through `secrets`, which
 * remembers each opened key: a handed delivery costs one lookup (src/lib/sealed-secret.ts).
 */
export function webhookOutboxHook(handoff: DeliveryHandoff, secrets: SecretSealer): ApplyHooks {
  const active = new ActiveWebhooks();
  return {
    forget: (orgIds) => active.forget(orgIds),
    writes(applied, optimistic) {
      // Decided once per group: rows are written claimed only while a worker takes them.
      const handing = handoff.open;
      // With tracing on, each row names the trace of the request that sent its action.
      const t = tracing();
      const actions: OutboxAction[] = [];
      const byId = new Map<string, { action: AppliedAction; row: OutboxAction }>();
      const { skipped, unknown } = active.sort(applied, optimistic);
      const statements: HookStatement[] = [];
      if (skipped.size > 0) statements.push({ guard: noActiveWebhooks([...skipped]) });
      if (unknown.size > 0) statements.push(active.learn([...unknown]));
      for (const a of applied) {
        if (a.log.template_id === null || skipped.has(a.organizationId)) continue;
        const ids: string[] = [];
        for (let i = 0; i < MAX_WEBHOOKS; i++) ids.push(newId('event'));
        // The batch the action joined is known only inside the statement (outbox.ts adds it).
        const ea = JSON.stringify({ ...a.log, batch_id: undefined }).slice(0, -1);
        const eo = JSON.stringify(a.object);
        const row: OutboxAction = {
          a: a.log.id,
          o: a.organizationId,
          t: a.log.template_id,
          n: a.log.name,
          w: a.log.wallet,
          c: a.log.when_created,
          ids,
          ea,
          eo,
        };
        const tp = t?.traceparentOf(a.log.hash);
        if (tp) row.tp = tp;
        actions.push(row);
        if (handing) byId.set(a.log.id, { action: a, row });
      }
      if (actions.length === 0) return statements;
      if (!handing) return [...statements, outboxInsert(actions, null)];
      const claimId = newId('event');
      return [
        ...statements,
        {
          collect: outboxInsert(actions, { id: claimId, leaseMs: LEASE_MS }),
          readBack: handedRows,
          committed(rows) {
            handoff.hand(
              (rows as HandedRow[]).flatMap((r): HandedDelivery[] => {
                const { action, row } = byId.get(r.action_id)!;
                const keys = openKeys(secrets, r);
                // A key that does not open: not handed; its delivery comes due when its lease
                // ends, and the claim says why (delivery-runner.ts).
                if (keys === null) return [];
                return [
                  {
                    id: r.id,
                    webhook_id: r.webhook_id,
                    organization_id: action.organizationId,
                    claim_id: claimId,
                    // The text outbox.ts wrote, with the batch the action joined.
                    event: `{"action":${row.ea},"batch_id":${JSON.stringify(action.log.batch_id)}},"object":${row.eo}}`,
                    created_at: new Date(action.log.when_created),
                    url: r.url,
                    ...keys,
                    trace_parent: row.tp ?? null,
                  },
                ];
              }),
            );
          },
        },
      ];
    },
  };
}

/** A handed row's keys opened (each remembered once opened); null when one does not open. */
function openKeys(
  secrets: SecretSealer,
  r: Pick<HandedRow, 'webhook_id' | 'signing_key' | 'previous_key'>,
): { signing_key: Buffer; previous_key: Buffer | null } | null {
  try {
    return {
      signing_key: secrets.openKeyHex(r.signing_key, signingKeyAt(r.webhook_id)),
      previous_key:
        r.previous_key === null
          ? null
          : secrets.openKeyHex(r.previous_key, previousKeyAt(r.webhook_id)),
    };
  } catch (err) {
    if (err instanceof SealedSecretError) return null;
    throw err;
  }
}

/** How long whether an organization has active webhooks is remembered (the guard decides). */
const REMEMBER_MS = 5 * 60_000;

/**
 * What this process remembers of which organizations have active webhooks. An action of an
 * organization without any has no delivery to queue, yet its row (five delivery ids, the
 * action and object as JSON) would be built and sent with every group only to match nothing.
 * So the optimistic path leaves out the actions of organizations remembered to have none and
 * adds a guard that aborts the statement if one of them has an active webhook after all (in
 * the statement's snapshot: one created on any process, a moment ago, counts). The group then
 * takes the locked path, which never relies on memory, and the memory of its organizations is
 * forgotten (`forget`). What is remembered is learnt from the group statements themselves,
 * one lookup per organization not remembered (docs/webhooks.md, "The outbox").
 */
class ActiveWebhooks {
  private readonly known = new TtlCache<string, boolean>(REMEMBER_MS, 100_000);

  /** The organizations whose actions go without outbox rows, and those not remembered. */
  sort(applied: readonly AppliedAction[], optimistic: boolean) {
    const skipped = new Set<string>();
    const unknown = new Set<string>();
    for (const a of applied) {
      const has = this.known.get(a.organizationId);
      if (has === undefined) unknown.add(a.organizationId);
      else if (!has && optimistic) skipped.add(a.organizationId);
    }
    return { skipped, unknown };
  }

  /** A statement that answers which of `orgIds` have active webhooks, remembered once committed. */
  learn(orgIds: string[]): HookStatement {
    return {
      collect: withActiveWebhooks(orgIds),
      committed: (rows) => {
        const has = new Set((rows as { organization_id: string }[]).map((r) => r.organization_id));
        for (const id of orgIds) this.known.set(id, has.has(id));
      },
    };
  }

  forget(orgIds: readonly string[]): void {
    for (const id of orgIds) this.known.delete(id);
  }
}
