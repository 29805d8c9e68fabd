import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createPublicDatabase, createReportsDatabase, type Database, type Db } from './db/pool.js';
import { OrganizationReports } from './db/reports.js';
import { preparedRows } from './db/prepared.js';
import type { CredentialVerifiers } from './http/auth.js';
import { MicroCache } from './http/micro-cache.js';
import type { Clock } from './lib/clock.js';
import { startedWhen, type Worker } from './lib/worker.js';
import { createIdentity, type Identity } from './modules/auth/identity.js';
import { SessionService } from './modules/auth/session-service.js';
import { AuthSweeper } from './modules/auth/sweeper.js';
import { TokenService } from './modules/auth/token-service.js';
import { Accounts, AddressNotices, WalletService } from './modules/wallets/index.js';
import { createSender, type MessageSender } from './modules/notify/sender.js';
import { RateLimiter } from './http/rate-limit/limiter.js';
import { createRateLimitStore } from './http/rate-limit/create-store.js';
import type { RateLimitStore } from './http/rate-limit/store.js';
import { BalanceService } from './modules/balance/service.js';
import { DepositService } from './modules/deposits/service.js';
import { organizationMembers, walletMemberships } from './modules/members/index.js';
import { MemberService } from './modules/members/service.js';
import { OrganizationService } from './modules/organizations/service.js';
import { SupportService } from './modules/support/service.js';
import { IndexerService } from './modules/indexer/service.js';
import { objectVisibility } from './modules/objects/index.js';
import { ObjectService } from './modules/objects/service.js';
import { createBlobStore } from './modules/storage/create-store.js';
import { StorageService } from './modules/storage/service.js';
import { TemplateService } from './modules/templates/service.js';
import { createEbus, type Ebus } from './modules/ebus/wiring.js';
import { PolicyService } from './modules/policies/service.js';
import { LowBalanceNotifier } from './modules/balance/low-balance.js';
import { PolicyStates } from './modules/policies/states.js';
import { LastUsedRecorder } from './modules/api-keys/last-used.js';
import { ApiKeyService } from './modules/api-keys/service.js';
import { ApiKeyVerifier } from './modules/api-keys/verifier.js';
import { createWebhooks, type Webhooks } from './modules/webhooks/wiring.js';
import { WebhookDeliveryWorker } from './workers/webhook-delivery.js';
import { batchVisibility } from './modules/batches/index.js';
import { createBatches, type Batches } from './modules/batches/wiring.js';
import { createLog } from './modules/log/wiring.js';
import type { LogService } from './modules/log/service.js';
import { composeHooks } from './modules/ebus/hooks.js';
import { BatchSealerWorker } from './workers/batch-sealer.js';
import { Readiness } from './modules/health/service.js';
import { IdempotencyService, IdempotencySweeper } from './modules/idempotency/index.js';
import { SecretSealer } from './lib/sealed-secret.js';
import { secureStoredSecrets } from './stored-secrets.js';
import type { RevocableCaches } from './revocations.js';
import { createNoticeListener } from './notices.js';
import type { ListenerState } from './db/listener.js';

/** Query shapes of the public list run as named statements; the rest unnamed. */
const PUBLIC_LIST_SHAPES = 32;

export interface BaseDeps {
  config: Config;
  database: Database;
  clock: Clock;
  logger: Logger;
}

/** Every service of the process, built once (the composition root's wiring). */
export interface Container extends BaseDeps {
  db: Db;
  /**
   * The pool of anonymous public reads (PUBLIC_DB_POOL_SIZE connections, each statement
   * cancelled after PUBLIC_STATEMENT_TIMEOUT_MS): closed with the workers.
   */
  publicDatabase: Database;
  /**
   * The pool of reports: authenticated reads whose cost grows with an organization's data
   * (REPORTS_DB_POOL_SIZE connections, REPORTS_PER_ORGANIZATION of them for one organization
   * at once): closed with the workers.
   */
  reportsDatabase: Database;
  tokens: TokenService;
  sessions: SessionService;
  verifiers: CredentialVerifiers;
  sender: MessageSender;
  rateLimitStore: RateLimitStore;
  /** What /readyz checks: PostgreSQL, and Redis and the chain when configured and used here. */
  readiness: Readiness;
  rateLimiter: RateLimiter;
  identity: Identity;
  wallets: WalletService;
  templates: TemplateService;
  objects: ObjectService;
  /** `GET /public/objects`'s short-lived answers (src/http/micro-cache.ts). */
  publicList: MicroCache;
  storage: StorageService;
  indexer: IndexerService;
  ebus: Ebus;
  apiKeys: ApiKeyService;
  policies: PolicyService;
  /** Emails owners and admins when a balance falls below its threshold (a worker too). */
  lowBalance: LowBalanceNotifier;
  apiKeyVerifier: ApiKeyVerifier;
  apiKeyLastUsed: LastUsedRecorder;
  workers: Worker[];
  organizations: OrganizationService;
  members: MemberService;
  balance: BalanceService;
  deposits: DepositService;
  support: SupportService;
  /** Idempotency keys of creating POSTs (src/modules/idempotency/routes.ts). */
  idempotency: IdempotencyService;
  webhooks: Webhooks;
  /** The delivery loop; started with the other workers when WEBHOOK_DELIVERY is on. */
  webhookWorker: WebhookDeliveryWorker;
  batches: Batches;
  /** The transparency log (docs/log.md). */
  log: LogService;
  /** The batch pipeline's loop; started with the other workers when BATCH_SEALER is on. */
  batchWorker: BatchSealerWorker;
  /**
   * The changes other instances announce (revocations, the public list, webhook keys, keyed
   * requests' ends), heard on a connection of its own (src/notices.ts): closed with the workers.
   */
  notices: ListenerState;
}

export async function createContainer(deps: BaseDeps): Promise<Container> {
  const { config, database, clock } = deps;
  const db = database.db;
  // Before any key is read: sealed under SECRETS_KEY, or refused (src/stored-secrets.ts).
  await secureStoredSecrets(db, config, deps.logger);
  const tokens = new TokenService(db, clock, config.publicUrl, new SecretSealer(config.secrets));
  await tokens.init();
  const sessions = new SessionService(db, clock, tokens, config.sessions);
  const sender = createSender(db, clock, deps.logger, config.smtp);
  // Windows, X-RateLimit-Reset and Retry-After by the service's clock (a test's fake one).
  const rateLimitNow = () => clock.now().getTime();
  const { store: rateLimitStore, redisReady } = await createRateLimitStore(
    config.redisUrl,
    deps.logger,
    rateLimitNow,
  );
  const readiness = new Readiness({
    db,
    redis: redisReady,
    // The chain is this process's dependency only where the sealer (which anchors) runs.
    chainRpcUrl: config.anchor && config.batches.sealerInProcess ? config.anchor.rpcUrl : null,
  });
  const rateLimiter = new RateLimiter(rateLimitStore, rateLimitNow);
  // Identity runs one way (docs/architecture.md): sign-in builds on the wallets' accounts, and
  // wallets reach sessions only through the port they declare, which sign-in implements.
  const accounts = new Accounts(
    clock,
    new AddressNotices(db, clock, sender, deps.logger),
    walletMemberships,
  );
  const apiKeyLastUsed = new LastUsedRecorder(db, deps.logger);
  const apiKeyVerifier = new ApiKeyVerifier(db, clock, apiKeyLastUsed);
  const identity = createIdentity({
    config,
    db,
    clock,
    logger: deps.logger,
    sessions,
    sender,
    accounts,
    apiKeys: { forget: (ids) => ids.forEach((id) => apiKeyVerifier.forget(id)) },
  });
  // Anonymous public reads (GET /public/*, the batch explorer, the transparency log) run on a
  // pool of their own, small and time-bounded, so that reads anyone can make slow never hold
  // the main pool's connections (docs/decisions.md, 2026-11-29).
  const publicDatabase = createPublicDatabase(database.url, config.publicDb);
  const publicDb = publicDatabase.db;
  // Members' reports (the balance history, the indexer's searches) on a bounded pool of their
  // own, and at most a few of one organization's at once, so one member's reports never take
  // the main pool's connections nor another organization's turn (docs/decisions.md,
  // 2026-11-29).
  const reportsDatabase = createReportsDatabase(database.url, config.reportsDb);
  const reports = new OrganizationReports(
    reportsDatabase.db,
    config.reportsDb.perOrganization,
    config.reportsDb.waitMs,
  );
  const wallets = new WalletService(db, clock, identity.sessions, accounts.notices, publicDb);
  // Public list answers, kept PUBLIC_LIST_CACHE_MS; emptied when any process makes a template
  // private (here at once, elsewhere through src/notices.ts).
  const publicList = new MicroCache(config.publicListCacheMs);
  // A switch is noted for the batches' contents in its transaction (docs/batches.md).
  const templates = new TemplateService(
    db,
    clock,
    objectVisibility(() => publicList.clear()),
    [batchVisibility],
    publicDb,
  );
  // The public list's filters choose its query's shape: only the first 32 shapes are named
  // (on each connection of the public pool).
  const objects = new ObjectService(db, preparedRows(publicDatabase.pool, PUBLIC_LIST_SHAPES));
  const storage = new StorageService(
    db,
    clock,
    createBlobStore(config.storage),
    config.publicUrl,
    config.storage.quotaBytes,
  );
  const indexer = new IndexerService(db, publicDb, reports);
  const webhooks = createWebhooks({
    db,
    clock,
    config,
    logger: deps.logger,
    sessions: identity.sessions,
  });
  const webhookWorker = new WebhookDeliveryWorker(webhooks.runner, deps.logger, {
    handoff: webhooks.handoff,
  });
  const batches = await createBatches({
    db,
    publicDb,
    clock,
    config,
    logger: deps.logger,
    databaseUrl: database.url,
  });
  const log = await createLog({
    db,
    publicDb,
    clock,
    config,
    logger: deps.logger,
    leaves: batches.explorer,
  });
  batches.sealer.setLog(log);
  const batchWorker = new BatchSealerWorker(batches.sealer, deps.logger);
  const policyStates = new PolicyStates(db);
  const ebus = createEbus({
    db,
    databaseUrl: database.url,
    clock,
    config,
    logger: deps.logger,
    hooks: composeHooks(batches.hook, webhooks.hook),
    batchSizes: batches.sizes,
    batchPublicKey: batches.publicKey,
    policies: policyStates,
    log: log.network(),
  });
  const policies = new PolicyService(db, clock, policyStates, identity.sessions);
  const apiKeys = new ApiKeyService(db, clock, apiKeyVerifier, identity.sessions);
  const idempotency = new IdempotencyService(db, clock, { pollMs: config.idempotencyPollMs });
  const sweeper = new IdempotencySweeper(db, clock, deps.logger);
  const authSweeper = new AuthSweeper(db, clock, config.sessions, deps.logger);
  const loops = () => config.role !== 'api';
  const workers: Worker[] = [
    {
      name: 'ebus-committer',
      start: () => undefined,
      stop: async () => {
        await ebus.committer.drain();
        await ebus.close();
      },
    },
    apiKeyLastUsed,
    // Where the background loops run (the `all` role here; worker-service.ts for `worker`).
    startedWhen(loops, sweeper),
    startedWhen(loops, authSweeper),
    startedWhen(loops, webhooks.retention),
    {
      name: webhookWorker.name,
      start: () => {
        if (config.webhooks.deliveryInProcess) webhookWorker.start();
      },
      stop: async () => {
        await webhookWorker.stop();
        await webhooks.client.close();
      },
    },
    {
      name: batchWorker.name,
      start: () => {
        if (config.batches.sealerInProcess) batchWorker.start();
      },
      stop: async () => {
        await batchWorker.stop();
        await log.settled();
        await batches.close();
      },
    },
    {
      // Stopped after the HTTP server (src/server.ts): no request is left to read on it.
      name: 'public-database',
      start: () => undefined,
      stop: () => publicDatabase.close(),
    },
    {
      // Likewise after the HTTP server.
      name: 'reports-database',
      start: () => undefined,
      stop: () => reportsDatabase.close(),
    },
  ];

  const verifiers: CredentialVerifiers = {
    bearer: (token) => sessions.verifyBearer(token),
    apiKey: (key) => apiKeyVerifier.verify(key),
  };

  // What this process remembers of credentials, and how it forgets: at once after a change it
  // made, and when another instance announces one (src/revocations.ts). None of it runs on a
  // cache hit.
  const caches: RevocableCaches = {
    forgetKey: (id) => apiKeyVerifier.forget(id),
    forgetSession: (id) => sessions.invalidate(id),
    forgetAll: () => {
      sessions.invalidateAll();
      apiKeyVerifier.forgetAll();
      ebus.signers.forgetAll();
    },
  };
  // A membership or role change drops what this instance cached about callers at once; the
  // other instances drop it when its notice arrives (migration 0041's triggers send it).
  const access = {
    issue: sessions.issue.bind(sessions),
    invalidateAll: () => caches.forgetAll(),
    requireRecentSignInOrKey: identity.sessions.requireRecentSignInOrKey.bind(identity.sessions),
  };
  const organizations = new OrganizationService(
    db,
    clock,
    access,
    organizationMembers,
    config.organizationsPerWallet,
  );
  const members = new MemberService(
    db,
    clock,
    access,
    sender,
    config.publicUrl,
    config.invitations,
  );
  const balance = new BalanceService(
    db,
    clock,
    async () => ebus.fees.cachedTotalWei() ?? (await ebus.fees.totalWei()),
    reports,
  );
  const lowBalance = new LowBalanceNotifier(db, clock, sender, deps.logger);
  // Like every background loop, not in an API-only process (docs/self-hosting.md, "Roles").
  workers.push({
    name: lowBalance.name,
    start: () => {
      if (config.role !== 'api') lowBalance.start();
    },
    stop: () => lowBalance.stop(),
  });
  const deposits = new DepositService(db, clock);
  const support = new SupportService(db, clock);
  // Last, once nothing above can fail: listening before the process serves, so no request
  // is answered from a memory that notices do not reach (a failed first attempt is retried
  // in the background, the caches emptied meanwhile).
  const targets = { credentials: caches, publicList, webhookKeys: webhooks.secrets, idempotency };
  const notices = createNoticeListener(database.url, targets, deps.logger);
  await notices.start();
  workers.push({ name: 'notice-listener', start: () => undefined, stop: () => notices.stop() });

  return {
    ...deps,
    db,
    publicDatabase,
    reportsDatabase,
    tokens,
    sessions,
    verifiers,
    sender,
    identity,
    wallets,
    rateLimitStore,
    readiness,
    rateLimiter,
    workers,
    organizations,
    members,
    balance,
    deposits,
    support,
    idempotency,
    templates,
    objects,
    publicList,
    storage,
    indexer,
    ebus,
    apiKeys,
    policies,
    lowBalance,
    apiKeyVerifier,
    apiKeyLastUsed,
    webhooks,
    webhookWorker,
    batches,
    log,
    batchWorker,
    notices,
  };
}
