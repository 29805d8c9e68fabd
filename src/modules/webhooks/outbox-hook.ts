import { newId } from '../../lib/ids.js';
import type { ApplyHooks } from '../ebus/hooks.js';
import { outboxInsert, type OutboxAction } from './repo/outbox.js';
import { MAX_WEBHOOKS } from './schema.js';

/**
 * The webhooks' part of the event bus's group statement: the matching deliveries are
 * written in the actions' own transaction, so an action that commits has its deliveries
 * queued and one that rolls back has none (spec §6, design.md §7: a crash loses nothing).
 * Matching runs in SQL against the webhooks as committed, so a webhook saved on any
 * instance applies to the next action everywhere.
 */
export const webhookOutboxHook: ApplyHooks = {
  writes(applied) {
    const actions: OutboxAction[] = [];
    for (const a of applied) {
      if (a.log.template_id === null) continue;
      const ids: string[] = [];
      for (let i = 0; i < MAX_WEBHOOKS; i++) ids.push(newId('event'));
      actions.push({
        a: a.log.id,
        o: a.organizationId,
        t: a.log.template_id,
        n: a.log.name,
        w: a.log.wallet,
        c: a.log.when_created,
        ids,
        // The batch the action joined is known only inside the statement (outbox.ts adds it).
        ea: JSON.stringify({ ...a.log, batch_id: undefined }).slice(0, -1),
        eo: JSON.stringify(a.object),
      });
    }
    return actions.length === 0 ? [] : [outboxInsert(actions)];
  },
};
