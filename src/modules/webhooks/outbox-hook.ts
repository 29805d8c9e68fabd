import { newId } from '../../lib/ids.js';
import type { ApplyHooks } from '../ebus/hooks.js';
import type { AppliedAction } from '../ebus/types.js';
import { LEASE_MS } from './delivery-runner.js';
import type { DeliveryHandoff, HandedDelivery } from './handoff.js';
import { handedRows, outboxInsert, type HandedRow, type OutboxAction } from './repo/outbox.js';
import { MAX_WEBHOOKS } from './schema.js';

/**
 * The webhooks' part of the event bus's group statement: the matching deliveries are
 * written in the actions' own transaction, so an action that commits has its deliveries
 * queued and one that rolls back has none (spec §6, design.md §7: a crash loses nothing).
 * Matching runs in SQL against the webhooks as committed, so a webhook saved on any
 * instance applies to the next action everywhere. When this process's worker takes handed
 * deliveries (handoff.ts), the rows are written claimed for it and handed over once the
 * group has committed.
 */
export function webhookOutboxHook(handoff: DeliveryHandoff): ApplyHooks {
  return {
    writes(applied) {
      // Decided once per group: rows are written claimed only while a worker takes them.
      const handing = handoff.open;
      const actions: OutboxAction[] = [];
      const byId = new Map<string, { action: AppliedAction; ea: string; eo: string }>();
      for (const a of applied) {
        if (a.log.template_id === null) continue;
        const ids: string[] = [];
        for (let i = 0; i < MAX_WEBHOOKS; i++) ids.push(newId('event'));
        // The batch the action joined is known only inside the statement (outbox.ts adds it).
        const ea = JSON.stringify({ ...a.log, batch_id: undefined }).slice(0, -1);
        const eo = JSON.stringify(a.object);
        actions.push({
          a: a.log.id,
          o: a.organizationId,
          t: a.log.template_id,
          n: a.log.name,
          w: a.log.wallet,
          c: a.log.when_created,
          ids,
          ea,
          eo,
        });
        if (handing) byId.set(a.log.id, { action: a, ea, eo });
      }
      if (actions.length === 0) return [];
      if (!handing) return [outboxInsert(actions, null)];
      const claimId = newId('event');
      return [
        {
          collect: outboxInsert(actions, { id: claimId, leaseMs: LEASE_MS }),
          readBack: handedRows,
          committed(rows) {
            handoff.hand(
              (rows as HandedRow[]).map((r): HandedDelivery => {
                const { action, ea, eo } = byId.get(r.action_id)!;
                return {
                  id: r.id,
                  webhook_id: r.webhook_id,
                  claim_id: claimId,
                  // The text outbox.ts wrote, with the batch the action joined.
                  event: `{"action":${ea},"batch_id":${JSON.stringify(action.log.batch_id)}},"object":${eo}}`,
                  created_at: new Date(action.log.when_created),
                  url: r.url,
                  signing_key: Buffer.from(r.signing_key, 'hex'),
                  previous_key: r.previous_key === null ? null : Buffer.from(r.previous_key, 'hex'),
                };
              }),
            );
          },
        },
      ];
    },
  };
}
