import path from 'node:path';
import {
  bigint,
  bool,
  ConfigError,
  int,
  list,
  oneOf,
  optional,
  str,
  timestamp,
  type Env,
} from './config-env.js';
import {
  anchor,
  deliveryRetentionDays,
  logOrigin,
  logSigningKey,
  secretsKeys,
  tracingConfig,
  trustProxy,
  webauthnOrigins,
  type AnchorConfig,
  type TracingConfig,
  type TrustProxy,
} from './config-settings.js';

export type { AnchorConfig, TracingConfig, TrustProxy } from './config-settings.js';

/**
 * The only reader of process.env (docs/architecture.md, "Architecture"). Parsed once at start; a
 * bad value fails fast with a message naming the variable. Every variable is listed in README.md.
 * One variable's reading is in config-env.ts; the settings made of several, or checked beyond
 * their type, in config-settings.ts.
 */
export interface Config {
  /**
   * What this process does (ONS_ROLE; docs/self-hosting.md, "Roles"): `all` serves the API
   * and runs the background loops, `api` only serves the API, `worker` only runs the loops
   * (webhook delivery, the batch sealer) and answers /healthz, /readyz and /metrics.
   */
  role: Role;
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /** Where `ons backup`/`restore` look first for pg_dump and pg_restore (PG_BIN_DIR). */
  pgBinDir: string | null;
  publicUrl: string;
  /** The built web console (console/dist) served at /console; see docs/console.md. */
  consoleDir: string;
  logLevel: (typeof LOG_LEVELS)[number];
  bodyLimitBytes: number;
  /** Limits on how long a client may take (ms); see README. */
  http: {
    /** The whole request, headers and body, must arrive within this. */
    requestTimeoutMs: number;
    /** The headers must arrive within this (no more than requestTimeoutMs). */
    headersTimeoutMs: number;
    /** A connection with no traffic either way for this long is closed. */
    idleTimeoutMs: number;
    /** A kept-alive connection waits this long for its next request. */
    keepAliveTimeoutMs: number;
  };
  /** How long a sign-in lasts (docs/auth.md "Sessions"); seconds in the environment. */
  sessions: {
    /** A session ends this long after its sign-in, however often it is refreshed. */
    maxAgeMs: number;
    /** A session ends when its refresh token was last used this long ago. */
    idleTimeoutMs: number;
  };
  /** Limits on invitations (docs/members.md, "Limits on invitations"). */
  invitations: {
    /** INVITATIONS_PER_RECIPIENT_PER_HOUR: invitation emails one address receives an hour. */
    perRecipientPerHour: number;
    /** INVITATIONS_PENDING_MAX: invitations an organization may have waiting at once. */
    pendingPerOrganization: number;
  };
  /** ORGANIZATIONS_PER_WALLET: live organizations a wallet may own (docs/organizations.md). */
  organizationsPerWallet: number;
  redisUrl: string | null;
  /** TRUST_PROXY: false, true (every hop), a hop count, or the proxies' addresses/CIDRs. */
  trustProxy: TrustProxy;
  publicListCacheMs: number;
  /** IDEMPOTENCY_POLL_MS: a retry waiting on another process's request reads again this often. */
  idempotencyPollMs: number;
  rateLimits: {
    enabled: boolean;
    /**
     * Counting in memory while several API processes serve (WORKERS > 1 without REDIS_URL)
     * is allowed (RATE_LIMIT_ALLOW_MEMORY_MULTI): each process then holds its own counts.
     */
    allowMemoryMulti: boolean;
    defaultPerMinute: number;
    defaultPerSecond: number;
    anonymousPerMinute: number;
    anonymousPerSecond: number;
  };
  networkId: string;
  /** Until this instant v2 paths redirect to v3 (301); from it on they answer 410. */
  v2Sunset: Date;
  dbPoolSize: number;
  /**
   * The pool of anonymous public reads (GET /public/*, the batch explorer, the transparency
   * log), apart from the main pool: PUBLIC_DB_POOL_SIZE connections, each statement cancelled
   * by PostgreSQL after PUBLIC_STATEMENT_TIMEOUT_MS, a connection waited for at most
   * PUBLIC_DB_WAIT_MS (docs/self-hosting.md, "Public reads").
   */
  publicDb: { poolSize: number; statementTimeoutMs: number; waitMs: number };
  /**
   * The pool of authenticated reads whose cost grows with an organization's data (the balance
   * history, the indexer's searches), apart from the main pool: REPORTS_DB_POOL_SIZE
   * connections, each statement cancelled after REPORTS_STATEMENT_TIMEOUT_MS, a connection or
   * the organization's turn waited for at most REPORTS_DB_WAIT_MS, at most
   * REPORTS_PER_ORGANIZATION of them held by one organization (docs/self-hosting.md, "Reports").
   */
  reportsDb: {
    poolSize: number;
    statementTimeoutMs: number;
    waitMs: number;
    perOrganization: number;
  };
  shutdownGraceMs: number;
  /** HTTP processes sharing the port (node:cluster); 1 runs everything in one process. */
  workers: number;
  webauthn: { rpId: string; rpName: string; origins: string[] };
  google: { jwksUrl: string; clientIds: string[]; issuers: string[] };
  smtp: { url: string | null; from: string };
  storage: {
    dir: string;
    uploadLimitBytes: number;
    quotaBytes: number;
    /** Downloads sent at once per process; past it 503 code 14 (docs/self-hosting.md). */
    maxDownloads: number;
    /** Of those, downloads sent at once to one client address; past it 503 code 14. */
    maxDownloadsPerClient: number;
    /** A download not read whole within this plus its size at the rate below is cut. */
    downloadGraceMs: number;
    downloadMinBytesPerSecond: number;
    s3: S3Config | null;
  };
  fees: { fixedWei: bigint; provingCostPerBatchWei: bigint; windowBatches: number };
  batches: {
    maxActions: number;
    maxSeconds: number;
    challengeWindowSeconds: number;
    /** Actions join batches (off only to measure what batches cost: bench/batches.ts). */
    enabled: boolean;
    /**
     * This process runs the sealer (BATCH_SEALER; always off with ONS_ROLE=api); any number
     * may, one acts at a time.
     */
    sealerInProcess: boolean;
    /** How the batch header thread yields to requests (BATCH_HEADER_PRIORITY; docs/batches.md). */
    headerPriority: HeaderPriority;
    /** How long a sealed batch rests before its header is read (BATCH_PROVE_DELAY_MS). */
    proveDelayMs: number;
  };
  /** Posting proven batches' commitments to an EVM chain (docs/anchoring.md); null: off. */
  anchor: AnchorConfig | null;
  /** The transparency log (docs/log.md). */
  log: {
    /** LOG_SIGNING_KEY: the Ed25519 seed's 32 bytes, hex; null: made and kept in the database. */
    signingKey: string | null;
    /** LOG_ORIGIN: the checkpoints' origin line and key name (default: PUBLIC_URL's host). */
    origin: string;
    /** LOG_WITNESSES: `<witness verifier key>=<url>`, comma-separated (checked at start). */
    witnesses: string;
    /**
     * LOG_WITNESS_REFRESH_SECONDS: a witness whose cosignature of the latest checkpoint is
     * older than this (or missing) is asked again, so verifiers can require fresh ones.
     */
    witnessRefreshSeconds: number;
  };
  webhooks: {
    allowLoopback: boolean;
    caFile: string | null;
    /** Run the delivery loop in this process (WEBHOOK_DELIVERY; always off with ONS_ROLE=api). */
    deliveryInProcess: boolean;
    /**
     * Deliveries that ended (`done`, `failed`, `stopped`) are deleted this many days after their
     * creation (WEBHOOK_DELIVERY_RETENTION_DAYS, 0–3650, default 30); 0 keeps them all. The
     * pruning runs where the background loops run (not with ONS_ROLE=api).
     */
    deliveryRetentionDays: number;
  };
  /** OpenTelemetry traces (docs/self-hosting.md, "Traces"); null: off (the default). */
  tracing: TracingConfig | null;
  /**
   * The key stored secrets are sealed under (SECRETS_KEY; src/lib/sealed-secret.ts), null:
   * they are stored as they are; and older keys, only to open what they sealed
   * (SECRETS_KEY_PREVIOUS). Never logged.
   */
  secrets: { key: Buffer | null; previous: Buffer[] };
  ebus: {
    groupWaitMs: number;
    maxGroup: number;
    maxConcurrentGroups: number;
    /** A group in flight longer than this (ms) stops holding others back (0: never). */
    groupStallMs: number;
    /** Most such stalled groups at once, beyond `maxConcurrentGroups`. */
    maxStalledGroups: number;
    /** Recover EOA signers on a thread of their own (off the event loop). */
    recoveryThread: boolean;
  };
}

export interface S3Config {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export const ROLES = ['all', 'api', 'worker'] as const;
export type Role = (typeof ROLES)[number];

/**
 * The batch header thread's scheduling: `idle` (Linux SCHED_IDLE: it runs only on a core
 * nothing else wants), `low` (nice 10), `normal` (as the process).
 */
export const HEADER_PRIORITIES = ['idle', 'low', 'normal'] as const;
/** pino's levels (`LOG_LEVEL`). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type HeaderPriority = (typeof HEADER_PRIORITIES)[number];

const DAY_SECONDS = 24 * 60 * 60;

/** The repository's console/dist, wherever the process was started from. */
const DEFAULT_CONSOLE_DIR = path.resolve(import.meta.dirname, '..', 'console', 'dist');

/**
 * `role` set by the entry point (`npm run worker` is the worker role whatever ONS_ROLE says).
 */
export interface ConfigOverrides {
  role?: Role;
}

export function loadConfig(env: Env = process.env, overrides: ConfigOverrides = {}): Config {
  const role = overrides.role ?? oneOf(env, 'ONS_ROLE', ROLES, 'all');
  const servesApi = role !== 'worker';
  const runsLoops = role !== 'api';
  const port = int(env, 'PORT', 8080, 0, 65535);
  const dataDir = path.resolve(str(env, 'DATA_DIR', './data'));
  const publicUrl = str(env, 'PUBLIC_URL', `http://localhost:${port}`).replace(/\/+$/, '');
  const s3Endpoint = optional(env, 'S3_ENDPOINT');
  const workers = int(env, 'WORKERS', 1, 1, 64);
  const rateLimited = bool(env, 'RATE_LIMIT_ENABLED', true);
  const requestTimeoutMs = int(env, 'HTTP_REQUEST_TIMEOUT_MS', 20_000, 100, 3_600_000);
  const headersTimeoutMs = int(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 3_600_000);
  if (headersTimeoutMs > requestTimeoutMs) {
    // Node refuses a server whose headers may take longer than the whole request.
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  const allowMemoryMulti = bool(env, 'RATE_LIMIT_ALLOW_MEMORY_MULTI', false);
  if (servesApi && workers > 1 && rateLimited && !optional(env, 'REDIS_URL') && !allowMemoryMulti) {
    // Each API process would count only the requests it happens to receive: a client gets
    // WORKERS times its limit. (API processes started apart, on one host or many, cannot be
    // seen from here: docs/self-hosting.md, "Roles".)
    throw new ConfigError(
      `WORKERS=${workers} runs ${workers} API processes, and the memory rate-limit store counts in each alone: ` +
        'set REDIS_URL so they share rate-limit counts (or RATE_LIMIT_ALLOW_MEMORY_MULTI=true to accept per-process limits, or RATE_LIMIT_ENABLED=false)',
    );
  }
  return {
    role,
    port,
    host: str(env, 'HOST', '0.0.0.0'),
    dataDir,
    databaseUrl: optional(env, 'DATABASE_URL'),
    pgBinDir: optional(env, 'PG_BIN_DIR'),
    publicUrl,
    consoleDir: path.resolve(str(env, 'CONSOLE_DIR', DEFAULT_CONSOLE_DIR)),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    http: {
      requestTimeoutMs,
      headersTimeoutMs,
      idleTimeoutMs: int(env, 'HTTP_IDLE_TIMEOUT_MS', 30_000, 100, 3_600_000),
      keepAliveTimeoutMs: int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 3_600_000),
    },
    sessions: {
      maxAgeMs: 1000 * int(env, 'SESSION_MAX_AGE_SECONDS', 30 * DAY_SECONDS, 60, 366 * DAY_SECONDS),
      idleTimeoutMs:
        1000 * int(env, 'SESSION_IDLE_TIMEOUT_SECONDS', 7 * DAY_SECONDS, 60, 366 * DAY_SECONDS),
    },
    invitations: {
      perRecipientPerHour: int(env, 'INVITATIONS_PER_RECIPIENT_PER_HOUR', 5, 1, 1000),
      pendingPerOrganization: int(env, 'INVITATIONS_PENDING_MAX', 100, 1, 100_000),
    },
    organizationsPerWallet: int(env, 'ORGANIZATIONS_PER_WALLET', 20, 1, 100_000),
    redisUrl: optional(env, 'REDIS_URL'),
    trustProxy: trustProxy(env),
    publicListCacheMs: int(env, 'PUBLIC_LIST_CACHE_MS', 1000, 0, 60_000),
    idempotencyPollMs: int(env, 'IDEMPOTENCY_POLL_MS', 1000, 10, 60_000),
    rateLimits: {
      enabled: rateLimited,
      allowMemoryMulti,
      defaultPerMinute: int(env, 'RATE_LIMIT_DEFAULT_PER_MINUTE', 1200, 1),
      defaultPerSecond: int(env, 'RATE_LIMIT_DEFAULT_PER_SECOND', 100, 1),
      anonymousPerMinute: int(env, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 6000, 1),
      anonymousPerSecond: int(env, 'RATE_LIMIT_ANONYMOUS_PER_SECOND', 500, 1),
    },
    networkId: str(env, 'NETWORK_ID', 'ons-local'),
    v2Sunset: timestamp(env, 'V2_SUNSET', '2026-06-30T00:00:00Z'),
    dbPoolSize: int(env, 'DB_POOL_SIZE', 20, 1, 1000),
    publicDb: {
      poolSize: int(env, 'PUBLIC_DB_POOL_SIZE', 4, 1, 100),
      // Never 0 (PostgreSQL's "no limit"): bounding these reads is the pool's purpose.
      statementTimeoutMs: int(env, 'PUBLIC_STATEMENT_TIMEOUT_MS', 5_000, 10, 60_000),
      waitMs: int(env, 'PUBLIC_DB_WAIT_MS', 2_000, 10, 60_000),
    },
    reportsDb: {
      poolSize: int(env, 'REPORTS_DB_POOL_SIZE', 4, 1, 100),
      // Never 0 (no limit): a report holds a connection at most this long.
      statementTimeoutMs: int(env, 'REPORTS_STATEMENT_TIMEOUT_MS', 10_000, 10, 300_000),
      waitMs: int(env, 'REPORTS_DB_WAIT_MS', 2_000, 10, 60_000),
      perOrganization: int(env, 'REPORTS_PER_ORGANIZATION', 2, 1, 100),
    },
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10_000, 0),
    workers,
    webauthn: {
      // A domain: browsers hash it lowercased, so "Example.com" must be used as example.com.
      rpId: str(env, 'WEBAUTHN_RP_ID', 'localhost').toLowerCase(),
      rpName: str(env, 'WEBAUTHN_RP_NAME', 'Object Network Service'),
      origins: webauthnOrigins(env, port),
    },
    google: {
      jwksUrl: str(env, 'GOOGLE_JWKS_URL', 'https://www.googleapis.com/oauth2/v3/certs'),
      clientIds: list(env, 'GOOGLE_CLIENT_IDS', []),
      issuers: list(env, 'GOOGLE_ISSUERS', ['https://accounts.google.com', 'accounts.google.com']),
    },
    smtp: { url: optional(env, 'SMTP_URL'), from: str(env, 'SMTP_FROM', 'no-reply@localhost') },
    storage: {
      dir: path.resolve(str(env, 'STORAGE_DIR', path.join(dataDir, 'files'))),
      uploadLimitBytes: int(env, 'UPLOAD_LIMIT_BYTES', 10 * 1024 * 1024, 1),
      quotaBytes: int(env, 'STORAGE_QUOTA_BYTES', 10 * 1024 * 1024 * 1024, 1),
      maxDownloads: int(env, 'STORAGE_MAX_DOWNLOADS', 64, 1, 100_000),
      maxDownloadsPerClient: int(env, 'STORAGE_MAX_DOWNLOADS_PER_CLIENT', 8, 1, 100_000),
      downloadGraceMs: int(env, 'STORAGE_DOWNLOAD_GRACE_MS', 30_000, 100, 3_600_000),
      downloadMinBytesPerSecond: int(
        env,
        'STORAGE_DOWNLOAD_MIN_BYTES_PER_SECOND',
        8192,
        1,
        2 ** 30,
      ),
      s3: s3Endpoint
        ? {
            endpoint: s3Endpoint,
            bucket: str(env, 'S3_BUCKET', 'ons'),
            region: str(env, 'S3_REGION', 'us-east-1'),
            accessKeyId: str(env, 'S3_ACCESS_KEY_ID', ''),
            secretAccessKey: str(env, 'S3_SECRET_ACCESS_KEY', ''),
          }
        : null,
    },
    fees: {
      fixedWei: bigint(env, 'FEE_FIXED_WEI', 1_000_000_000_000_000n),
      provingCostPerBatchWei: bigint(
        env,
        'FEE_PROVING_COST_PER_BATCH_WEI',
        100_000_000_000_000_000n,
      ),
      windowBatches: int(env, 'FEE_WINDOW_BATCHES', 20, 1, 10_000),
    },
    batches: {
      maxActions: int(env, 'BATCH_MAX_ACTIONS', 1000, 1),
      maxSeconds: int(env, 'BATCH_MAX_SECONDS', 10, 1),
      challengeWindowSeconds: int(env, 'BATCH_CHALLENGE_WINDOW_SECONDS', 3600, 0),
      enabled: bool(env, 'BATCHES_ENABLED', true),
      sealerInProcess: runsLoops && bool(env, 'BATCH_SEALER', true),
      headerPriority: oneOf(env, 'BATCH_HEADER_PRIORITY', HEADER_PRIORITIES, 'idle'),
      proveDelayMs: int(env, 'BATCH_PROVE_DELAY_MS', 3_000, 0, 600_000),
    },
    anchor: anchor(env),
    log: {
      signingKey: logSigningKey(env),
      origin: logOrigin(env, publicUrl),
      witnesses: str(env, 'LOG_WITNESSES', ''),
      witnessRefreshSeconds: int(env, 'LOG_WITNESS_REFRESH_SECONDS', 1800, 60, 86_400),
    },
    webhooks: {
      allowLoopback: bool(env, 'WEBHOOK_ALLOW_LOOPBACK', false),
      caFile: optional(env, 'WEBHOOK_CA_FILE'),
      deliveryInProcess: runsLoops && bool(env, 'WEBHOOK_DELIVERY', true),
      deliveryRetentionDays: deliveryRetentionDays(env),
    },
    tracing: tracingConfig(env),
    secrets: secretsKeys(env),
    ebus: {
      groupWaitMs: int(env, 'EBUS_GROUP_WAIT_MS', 1, 0, 1000),
      maxGroup: int(env, 'EBUS_MAX_GROUP', 500, 1, 10_000),
      // One group statement at a time by default: fewer, larger groups cost PostgreSQL less
      // per action than concurrent ones (docs/decisions.md, "one group in flight").
      maxConcurrentGroups: int(env, 'EBUS_MAX_CONCURRENT_GROUPS', 1, 1, 64),
      // A group waiting that long is waiting for a lock, not for PostgreSQL's CPU: the next
      // group may start beside it (docs/decisions.md, "A stalled group no longer holds the
      // others back").
      groupStallMs: int(env, 'EBUS_GROUP_STALL_MS', 100, 0, 60_000),
      maxStalledGroups: int(env, 'EBUS_MAX_STALLED_GROUPS', 4, 0, 64),
      recoveryThread: bool(env, 'EBUS_RECOVERY_THREAD', true),
    },
  };
}
