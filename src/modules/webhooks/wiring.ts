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
import { gatedResolver } from './http-client/lookup-gate.js';
import { DeliveryHandoff } from './handoff.js';
import { webhookOutboxHook } from './outbox-hook.js';
import type { ApplyHooks } from '../ebus/index.js';
import { WebhookService } from './service.js';

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
}

export interface WebhooksWiring {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** Tests may answer what they like; the system's resolver otherwise. */
  resolve?: HostResolver;
  /** Tests may shorten the 10 s answer time. */
  timeoutMs?: number;
}

/** Builds the webhooks feature: management, delivery log, and the delivery runner. */
export function createWebhooks(w: WebhooksWiring): Webhooks {
  const policy = { allowLoopback: w.config.webhooks.allowLoopback };
  // DNS queries, at most LOOKUP_SLOTS names at once, each name asked once at a time.
  const resolve = w.resolve ?? gatedResolver(dnsResolver());
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
      resolve,
      secrets,
      logger: w.logger,
    }),
    log: new DeliveryLogService(w.db, w.clock),
    runner: new DeliveryRunner(w.db, w.clock, client, w.logger, secrets),
    client,
    hook: webhookOutboxHook(handoff, secrets),
    handoff,
    secrets,
  };
}
