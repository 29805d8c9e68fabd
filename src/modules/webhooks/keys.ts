import type { SecretTable } from '../../db/sealed-columns.js';
import type { SecretPlace } from '../../lib/sealed-secret.js';
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

export const previousKeyAt = (webhookId: string): SecretPlace => ({
  column: 'webhooks.previous_signing_key',
  row: webhookId,
});

const column = (name: KeyColumn) => ({
  name: `webhooks.${name}`,
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
