import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { SecretSealer } from '../../lib/sealed-secret.js';
import { DeliveryLogService } from './delivery-log.js';
import { DeliveryRunner } from './delivery-runner.js';
import type { HostResolver } from './http-client/address-policy.js';
import { dnsResolver } from './http-client/dns-resolver.js';
import { DeliveryClient } from './http-client/delivery-client.js';
import { gatedResolver, SAVE_LOOKUP_QUEUE, SAVE_LOOKUP_SLOTS } from './http-client/lookup-gate.js';
import { DeliveryHandoff } from './handoff.js';
import { webhookOutboxHook } from './outbox-hook.js';
import { DeliveryRetention } from './retention.js';
import type { ApplyHooks } from '../ebus/index.js';
import { WebhookService, type WebhookSessions } from './service.js';

export interface Webhooks {
  service: WebhookService;
  log: DeliveryLogService;
  runner: DeliveryRunner;
  client: DeliveryClient;
  /** For the event bus: queues the matching deliveries in the group statement. */
  hook: ApplyHooks;
  /** Where this process's delivery worker takes the deliveries its groups wrote. */
  handoff: DeliveryHandoff;
  /** Opens the webhooks' stored keys, remembering them, for all of the above. */
  secrets: SecretSealer;
  /**
   * Deletes ended deliveries past WEBHOOK_DELIVERY_RETENTION_DAYS (a loop, started where the
   * background loops run).
   */
  retention: DeliveryRetention;
}

export interface WebhooksWiring {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** Sign-in's recent-sign-in rule, for the changes that need it (service.ts). */
  sessions: WebhookSessions;
  /**
   * Tests may answer what they like, for saves and deliveries alike (no gate of ours then
   * unless they bring one); the gated DNS resolver otherwise.
   */
  resolve?: HostResolver;
  /** Tests may name their own name servers (`host:port`); `/etc/resolv.conf`'s otherwise. */
  nameServers?: string[];
  /** Tests may shorten the 10 s answer time. */
  timeoutMs?: number;
}

/** Builds the webhooks feature: management, delivery log, the delivery runner, the retention. */
export function createWebhooks(w: WebhooksWiring): Webhooks {
  const policy = { allowLoopback: w.config.webhooks.allowLoopback };
  // DNS queries through two gates (lookup-gate.ts): deliveries', at most LOOKUP_SLOTS names
  // at once, and saves', at most SAVE_LOOKUP_SLOTS, so that saves (any caller's, as many as
  // its rate limit lets through) can never take a delivery's place. Within each gate a name
  // is asked once at a time.
  const dns = dnsResolver({ servers: w.nameServers });
  const resolve = w.resolve ?? gatedResolver(dns);
  const saveResolve = w.resolve ?? gatedResolver(dns, SAVE_LOOKUP_SLOTS, SAVE_LOOKUP_QUEUE);
  // Both settings open doors production must keep shut: say so at every start.
  if (policy.allowLoopback) {
    w.logger.warn(
      'WEBHOOK_ALLOW_LOOPBACK is on: webhooks may target loopback addresses (tests only)',
    );
  }
  const caFile = w.config.webhooks.caFile;
  if (caFile) {
    w.logger.warn(
      { caFile },
      'WEBHOOK_CA_FILE is set: webhook deliveries trust an extra CA (tests only)',
    );
  }
  const client = new DeliveryClient({
    policy,
    resolve,
    extraCa: caFile ? readFileSync(caFile, 'utf8') : null,
    timeoutMs: w.timeoutMs,
    logger: w.logger,
  });
  const handoff = new DeliveryHandoff(w.db, w.logger);
  // One per process's webhooks: the runner and the fast lane share the keys it has opened.
  const secrets = new SecretSealer(w.config.secrets);
  return {
    service: new WebhookService({
      db: w.db,
      clock: w.clock,
      policy,
      resolve: saveResolve,
      secrets,
      logger: w.logger,
      sessions: w.sessions,
    }),
    log: new DeliveryLogService(w.db, w.clock),
    runner: new DeliveryRunner(w.db, w.clock, client, w.logger, secrets),
    client,
    hook: webhookOutboxHook(handoff, secrets),
    handoff,
    secrets,
    retention: new DeliveryRetention(
      w.db,
      w.clock,
      w.logger,
      w.config.webhooks.deliveryRetentionDays,
    ),
  };
}
