import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database, Db } from './db/pool.js';
import { preparedRows } from './db/prepared.js';
import type { CredentialVerifiers } from './http/auth.js';
import type { Clock } from './lib/clock.js';
import { SessionService } from './modules/auth/session-service.js';
import { TokenService } from './modules/auth/token-service.js';
import { createSender, type MessageSender } from './modules/notify/sender.js';
import { IndexerService } from './modules/indexer/service.js';
import { ObjectService } from './modules/objects/service.js';
import { createBlobStore } from './modules/storage/create-store.js';
import { StorageService } from './modules/storage/service.js';
import { TemplateService } from './modules/templates/service.js';

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
  templates: TemplateService;
  objects: ObjectService;
  storage: StorageService;
  indexer: IndexerService;
  workers: Worker[];
}

export async function createContainer(deps: BaseDeps): Promise<Container> {
  const { config, database, clock } = deps;
  const db = database.db;
  const tokens = new TokenService(db, clock, config.publicUrl);
  await tokens.init();
  const sessions = new SessionService(db, clock, tokens);
  const sender = createSender(db, clock, deps.logger, config.smtp);
  const templates = new TemplateService(db, clock);
  const objects = new ObjectService(db, preparedRows(database.pool));
  const storage = new StorageService(db, clock, createBlobStore(config.storage), config.publicUrl);
  const indexer = new IndexerService(db);
  const workers: Worker[] = [];

  const verifiers: CredentialVerifiers = {
    bearer: (token) => sessions.verifyBearer(token),
    // Replaced by the API keys feature; until then no key is valid.
    apiKey: async () => ({ ok: false, reason: 'invalid API key' }),
  };

  return {
    ...deps,
    db,
    tokens,
    sessions,
    verifiers,
    sender,
    templates,
    objects,
    storage,
    indexer,
    workers,
  };
}
