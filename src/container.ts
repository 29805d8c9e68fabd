import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database, Db } from './db/pool.js';
import type { CredentialVerifiers } from './http/auth.js';
import type { Clock } from './lib/clock.js';
import { SessionService } from './modules/auth/session-service.js';
import { TokenService } from './modules/auth/token-service.js';
import { createSender, type MessageSender } from './modules/notify/sender.js';
import { LastUsedRecorder } from './modules/api-keys/last-used.js';
import { ApiKeyService } from './modules/api-keys/service.js';
import { ApiKeyVerifier } from './modules/api-keys/verifier.js';

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
  apiKeys: ApiKeyService;
  apiKeyVerifier: ApiKeyVerifier;
  apiKeyLastUsed: LastUsedRecorder;
  workers: Worker[];
}

export async function createContainer(deps: BaseDeps): Promise<Container> {
  const { config, database, clock } = deps;
  const db = database.db;
  const tokens = new TokenService(db, clock, config.publicUrl);
  await tokens.init();
  const sessions = new SessionService(db, clock, tokens);
  const sender = createSender(db, clock, deps.logger, config.smtp);
  const apiKeyLastUsed = new LastUsedRecorder(db, deps.logger);
  const apiKeyVerifier = new ApiKeyVerifier(db, clock, apiKeyLastUsed);
  const apiKeys = new ApiKeyService(db, clock, apiKeyVerifier);
  const workers: Worker[] = [apiKeyLastUsed];

  const verifiers: CredentialVerifiers = {
    bearer: (token) => sessions.verifyBearer(token),
    apiKey: (key) => apiKeyVerifier.verify(key),
  };

  return {
    ...deps,
    db,
    tokens,
    sessions,
    verifiers,
    sender,
    apiKeys,
    apiKeyVerifier,
    apiKeyLastUsed,
    workers,
  };
}
