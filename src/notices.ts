import type { Logger } from 'pino';
import { ChannelListener } from './db/listener.js';
import type { MicroCache } from './http/micro-cache.js';
import type { SecretSealer } from './lib/sealed-secret.js';
import { IDEMPOTENCY_CHANNEL, type IdempotencyNotices } from './modules/idempotency/index.js';
import { PUBLIC_LIST_CHANNEL } from './modules/objects/index.js';
import { WEBHOOK_KEYS_CHANNEL, webhookKeyNotices } from './modules/webhooks/keys.js';
import { applyNotice, REVOCATION_CHANNEL, type RevocableCaches } from './revocations.js';

/** What an API process keeps in memory that a change committed by another process must empty. */
export interface NoticeTargets {
  /** The credential checks (src/revocations.ts). */
  credentials: RevocableCaches;
  /** `GET /public/objects`'s answers (`PUBLIC_LIST_CACHE_MS`). */
  publicList: MicroCache;
  /** The webhook signing keys this process opened (webhooks' `secrets`). */
  webhookKeys: SecretSealer;
  /** The retries waiting for a first request of another process (the idempotency service). */
  idempotency: IdempotencyNotices;
}

/**
 * The changes every other process announces, heard by this API process on one connection of
 * its own (`ons-listen`, src/db/listener.ts), one channel per kind of change (docs/auth.md,
 * "Revocation on every server"; docs/objects.md, "The public list"; docs/webhooks.md;
 * docs/api.md, "Idempotent requests"):
 *
 * - `ons_revocations` (migration 0041): the credential checks the notice names;
 * - `ons_public_list` (migration 0043): a template made private, a public template or object
 *   deleted: every cached public list answer;
 * - `ons_webhook_keys` (migration 0043): the keys opened for that webhook;
 * - `ons_idempotency` (migration 0044): a first request answered or its key given back: the
 *   retries waiting on that key read it again.
 *
 * While it is not listening (lost, or PostgreSQL away) notices may be missed: everything is
 * forgotten at the loss, at each attempt to listen again (at most 4 s apart) and once listening
 * again, and the public list's cache is not used at all meanwhile (each request reads the
 * database, nothing is kept), since a private object must never be answered publicly. Each
 * waiting retry reads its key again at those moments too, and every `pollMs` (1 s) anyway.
 */
export function createNoticeListener(
  connectionString: string,
  t: NoticeTargets,
  logger: Logger,
): ChannelListener {
  const listener = new ChannelListener({
    connectionString,
    channels: {
      [REVOCATION_CHANNEL]: (payload) => applyNotice(t.credentials, payload),
      [PUBLIC_LIST_CHANNEL]: () => t.publicList.clear(),
      [WEBHOOK_KEYS_CHANNEL]: webhookKeyNotices(t.webhookKeys),
      [IDEMPOTENCY_CHANNEL]: (payload) => t.idempotency.heard(payload),
    },
    onGap: () => {
      t.credentials.forgetAll();
      t.publicList.clear();
      t.webhookKeys.forgetAll();
      t.idempotency.wakeAll();
    },
    logger,
  });
  t.publicList.trustOnlyWhile(() => listener.listening);
  return listener;
}

/**
 * A worker's listener (src/worker-service.ts): a worker checks no credential and serves no
 * public list, but its delivery loop opens webhook keys sealed under SECRETS_KEY and keeps
 * them, so it hears `ons_webhook_keys` alone, on a connection of its own (`ons-listen`);
 * while not listening it forgets every opened key, as an API process does.
 */
export function createWorkerNoticeListener(
  connectionString: string,
  webhookKeys: SecretSealer,
  logger: Logger,
): ChannelListener {
  return new ChannelListener({
    connectionString,
    channels: { [WEBHOOK_KEYS_CHANNEL]: webhookKeyNotices(webhookKeys) },
    onGap: () => webhookKeys.forgetAll(),
    logger,
  });
}
