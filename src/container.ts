import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database, Db } from './db/pool.js';
import type { CredentialVerifiers } from './http/auth.js';
import type { Clock } from './lib/clock.js';
import { SessionService } from './modules/auth/session-service.js';
import { TokenService } from './modules/auth/token-service.js';
import { createSender, type MessageSender } from './modules/notify/sender.js';
import { createEbus, type Ebus } from './modules/ebus/wiring.js';

/** A background loop owned by the service (design.md §2 src/workers). */
export interface Worker {
  name: string;
  start(): void;
  /** Stops taking new work and finishes what is in hand. */
  stop(): Promise<void>;
}

export interface BaseDeps {
  config: Config;
  database: Database;
  clock: Clock;
  logger: Logger;
}

/** Every service of the process, built once (the composition root's wiring). */
export interface Container extends BaseDeps {
  db: Db;
  tokens: TokenService;
  sessions: SessionService;
  verifiers: CredentialVerifiers;
  sender: MessageSender;
  ebus: Ebus;
  workers: Worker[];
}

export async function createContainer(deps: BaseDeps): Promise<Container> {
  const { config, database, clock } = deps;
  const db = database.db;
  const tokens = new TokenService(db, clock, config.publicUrl);
  await tokens.init();
  const sessions = new SessionService(db, clock, tokens);
  const sender = createSender(db, clock, deps.logger, config.smtp);
  // Batches and webhooks pass `hooks` (and batches `batchSizes`) here when they land.
  const ebus = createEbus({ db, clock, config, logger: deps.logger });
  const workers: Worker[] = [
    { name: 'ebus-committer', start: () => undefined, stop: () => ebus.committer.drain() },
  ];

  const verifiers: CredentialVerifiers = {
    bearer: (token) => sessions.verifyBearer(token),
    // Replaced by the API keys feature; until then no key is valid.
    apiKey: async () => ({ ok: false, reason: 'invalid API key' }),
  };

  return { ...deps, db, tokens, sessions, verifiers, sender, ebus, workers };
}
