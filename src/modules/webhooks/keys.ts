import type { SecretTable } from '../../db/sealed-columns.js';
import { randomBytes } from 'node:crypto';
import { isId } from '../../lib/ids.js';
import { isSealed, type SecretPlace, type SecretSealer } from '../../lib/sealed-secret.js';
import { storedKeys, storeKeys, type KeyColumn } from './repo/webhooks.js';

/**
 * Where a webhook's keys are kept (src/lib/sealed-secret.ts): each sealed value is bound to
 * its column and its webhook, so the current key is opened and sealed again for
 * `previous_signing_key` when it is rotated (service.ts), never copied there as it is.
 */
export const signingKeyAt = (webhookId: string): SecretPlace => ({
  column: 'webhooks.signing_key',
  row: webhookId,
});

/**
 * A previous key opens as its own place or as the webhook's current key's: a release before
 * the current one rotated by copying the stored current key as it was (bound to
 * `signing_key`), and a process of it may still run beside this one.
 */
export const previousKeyAt = (webhookId: string): SecretPlace => ({
  column: 'webhooks.previous_signing_key',
  row: webhookId,
  alsoAs: { column: 'webhooks.signing_key', row: webhookId },
});

/**
 * The channel on which a webhook whose stored keys changed is announced: migration 0043's
 * triggers send the webhook's id from the transaction that rotates its key, seals it, or
 * deletes the webhook (`all` for an id too long for a notice), so PostgreSQL delivers the
 * notice when, and only if, that transaction commits.
 */
export const WEBHOOK_KEYS_CHANNEL = 'ons_webhook_keys';

/**
 * What a notice on `WEBHOOK_KEYS_CHANNEL` does in a process (src/notices.ts): it forgets the
 * keys it opened for that webhook, as the process that made the change does (service.ts,
 * `forgetKeys`); `all`, or anything that is not a webhook id, forgets every opened key. The
 * notices of one turn of the event loop are taken together, so a statement that changes many
 * webhooks (the start's sealing pass) costs one pass over the opened keys, not one per webhook.
 */
export function webhookKeyNotices(secrets: SecretSealer): (payload: string) => void {
  let pending: string[] = [];
  const flush = () => {
    const ids = pending;
    pending = [];
    secrets.forget(ids.flatMap((id) => [signingKeyAt(id), previousKeyAt(id)]));
  };
  return (payload) => {
    if (!isId('webhook', payload)) {
      secrets.forgetAll();
      return;
    }
    if (pending.length === 0) setImmediate(flush);
    pending.push(payload);
  };
}

const column = (name: KeyColumn) => ({
  name: `webhooks.${name}`,
  place: name === 'previous_signing_key' ? previousKeyAt : signingKeyAt,
  read: (exec: Parameters<typeof storedKeys>[0], prefix: string, starting: boolean) =>
    storedKeys(exec, name, prefix, starting),
  store: (exec: Parameters<typeof storeKeys>[0], changes: Parameters<typeof storeKeys>[2]) =>
    storeKeys(exec, name, changes),
});

/** The webhooks' keys, for the start-up pass (src/stored-secrets.ts). */
export const webhookSecrets: SecretTable = {
  table: 'webhooks',
  columns: [column('signing_key'), column('previous_signing_key')],
};

/**
 * A new signing key: 32 random bytes, drawn again in the one case in 2⁵⁶ that they begin with
 * the sealed mark (`sealed:`), which a stored clear key must never do.
 */
export function newSigningKey(random: (n: number) => Buffer = randomBytes): Buffer {
  for (;;) {
    const key = random(32);
    if (!isSealed(key)) return key;
  }
}
