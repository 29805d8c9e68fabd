import { isIP, isIPv4 } from 'node:net';
import path from 'node:path';
import { isTimestamp } from './lib/timestamp.js';

/**
 * The only reader of process.env (docs/architecture.md, "Architecture"). Parsed once at start; a
 * bad value fails fast with a message naming the variable. Every variable is listed in README.md.
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
  redisUrl: string | null;
  /** TRUST_PROXY: false, true (every hop), a hop count, or the proxies' addresses/CIDRs. */
  trustProxy: TrustProxy;
  publicListCacheMs: number;
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
  shutdownGraceMs: number;
  /** HTTP processes sharing the port (node:cluster); 1 runs everything in one process. */
  workers: number;
  webauthn: { rpId: string; rpName: string; origins: string[] };
  google: { jwksUrl: string; clientIds: string[]; issuers: string[] };
  smtp: { url: string | null; from: string };
  storage: { dir: string; uploadLimitBytes: number; quotaBytes: number; s3: S3Config | null };
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

export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's OTLP/HTTP base URL (`/v1/traces` is added). */
  endpoint: string;
  /** OTEL_EXPORTER_OTLP_HEADERS (`key=value,…`): sent with each export; may hold a key, never logged. */
  exporterHeaders: Record<string, string>;
  /** OTEL_SERVICE_NAME, default `ons`. */
  serviceName: string;
  /** OTEL_TRACES_SAMPLER_ARG: the share of new traces recorded, 0–1 (default 1). */
  sampleRatio: number;
}

export interface AnchorConfig {
  /** The chain's JSON-RPC endpoint (http or https; may carry a provider's key: never logged). */
  rpcUrl: string;
  /** The anchoring account's secp256k1 key, lowercase 0x + 64 hex. Never logged. */
  privateKey: `0x${string}`;
  /** Blocks mined on top of the transaction's block before it counts as final. */
  confirmations: number;
}

type Env = Record<string, string | undefined>;

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

class ConfigError extends Error {}

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

function bigint(env: Env, name: string, fallback: bigint): bigint {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,78}$/.test(raw)) throw new ConfigError(`${name} must be a whole number of wei`);
  return BigInt(raw);
}

function str(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

function optional(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : raw;
}

function timestamp(env: Env, name: string, fallback: string): Date {
  const raw = str(env, name, fallback);
  if (!isTimestamp(raw)) {
    throw new ConfigError(`${name} must be a date-time such as 2026-06-30T00:00:00Z, got "${raw}"`);
  }
  return new Date(raw);
}

function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/** What Fastify's `trustProxy` takes of TRUST_PROXY. */
export type TrustProxy = boolean | number | string[];

/**
 * TRUST_PROXY (docs/self-hosting.md, "Behind a proxy"): `false` (default: the socket's
 * address), a whole number of proxies in front (the client address is the one the farthest
 * of them saw: `1` behind one load balancer), a comma list of the proxies' addresses or CIDRs,
 * or `true` (trust every hop: anyone can then choose their address by sending
 * X-Forwarded-For, unless the proxy replaces that header).
 */
function trustProxy(env: Env): TrustProxy {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d{1,2}$/.test(raw)) return Number(raw) === 0 ? false : Number(raw);
  const entries = raw.split(',').map((s) => s.trim());
  for (const e of entries) {
    const [address, bits, extra] = e.split('/');
    const okBits =
      bits === undefined ||
      (/^\d{1,3}$/.test(bits) && Number(bits) <= (isIPv4(address ?? '') ? 32 : 128));
    if (extra !== undefined || !isIP(address ?? '') || !okBits) {
      throw new ConfigError(
        `TRUST_PROXY must be true, false, a number of proxies, or addresses/CIDRs separated by commas; "${e}" is none of these`,
      );
    }
  }
  return entries;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false`);
}

/** secp256k1's group order: a private key is a whole number in [1, n - 1]. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * On-chain anchoring: on when both ANCHOR_RPC_URL and ANCHOR_PRIVATE_KEY are set, off when
 * neither is; one without the other is a mistake, refused at start. Neither value is ever
 * quoted in a message (the URL may carry a provider's API key).
 */
function anchor(env: Env): AnchorConfig | null {
  const confirmations = int(env, 'ANCHOR_CONFIRMATIONS', 2, 0, 1000);
  const rpcUrl = optional(env, 'ANCHOR_RPC_URL');
  const key = optional(env, 'ANCHOR_PRIVATE_KEY');
  if (rpcUrl === null && key === null) return null;
  if (rpcUrl === null || key === null) {
    const [set, unset] =
      rpcUrl === null
        ? ['ANCHOR_PRIVATE_KEY', 'ANCHOR_RPC_URL']
        : ['ANCHOR_RPC_URL', 'ANCHOR_PRIVATE_KEY'];
    throw new ConfigError(
      `${set} is set but ${unset} is not: anchoring needs both (or neither, to leave it off)`,
    );
  }
  let protocol: string;
  try {
    protocol = new URL(rpcUrl).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new ConfigError('ANCHOR_RPC_URL must be an http:// or https:// URL (value not shown)');
  }
  const scalar = /^0x[0-9a-fA-F]{64}$/.test(key) ? BigInt(key) : 0n;
  if (scalar === 0n || scalar >= SECP256K1_N) {
    throw new ConfigError(
      'ANCHOR_PRIVATE_KEY must be a secp256k1 private key: 0x followed by 64 hex digits (value not shown)',
    );
  }
  return { rpcUrl, privateKey: key.toLowerCase() as `0x${string}`, confirmations };
}

/** LOG_SIGNING_KEY: 32 bytes as 64 hex digits (0x optional) or base64; never quoted. */
function logSigningKey(env: Env): string | null {
  const raw = optional(env, 'LOG_SIGNING_KEY');
  if (raw === null) return null;
  const hex = raw.replace(/^0x/, '');
  if (/^[0-9a-fA-F]{64}$/.test(hex)) return hex.toLowerCase();
  const bytes = Buffer.from(raw, 'base64');
  if (bytes.length === 32 && /^[A-Za-z0-9+/]{43}=?$/.test(raw)) return bytes.toString('hex');
  throw new ConfigError(
    'LOG_SIGNING_KEY must be a 32-byte Ed25519 seed: 64 hex digits or base64 (value not shown)',
  );
}

/**
 * One 32-byte key of SECRETS_KEY or SECRETS_KEY_PREVIOUS: 64 hex digits or base64url (43
 * characters, `=` padding allowed); null for anything else. Only this canonical form is read,
 * so one key has one spelling of each kind.
 */
function secretKeyBytes(raw: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return Buffer.from(raw, 'hex');
  const unpadded = raw.replace(/=$/, '');
  if (!/^[A-Za-z0-9_-]{43}$/.test(unpadded)) return null;
  const bytes = Buffer.from(unpadded, 'base64url');
  return bytes.length === 32 && bytes.toString('base64url') === unpadded ? bytes : null;
}

/**
 * SECRETS_KEY (docs/self-hosting.md, "Secrets at rest") and SECRETS_KEY_PREVIOUS (comma-
 * separated older keys, only to open what they sealed; refused without SECRETS_KEY, which
 * would leave nothing to seal new secrets under). Neither value is ever quoted.
 */
function secretsKeys(env: Env): Config['secrets'] {
  const raw = optional(env, 'SECRETS_KEY');
  const previousRaw = list(env, 'SECRETS_KEY_PREVIOUS', []);
  const form = '32 random bytes as 64 hex digits or base64url (openssl rand -hex 32)';
  const key = raw === null ? null : secretKeyBytes(raw.trim());
  if (raw !== null && key === null) {
    throw new ConfigError(`SECRETS_KEY must be ${form} (value not shown)`);
  }
  if (key === null && previousRaw.length > 0) {
    throw new ConfigError(
      'SECRETS_KEY_PREVIOUS is set but SECRETS_KEY is not: older keys only open what they sealed, and new secrets need SECRETS_KEY',
    );
  }
  const previous = previousRaw.map((entry, i) => {
    const bytes = secretKeyBytes(entry);
    if (bytes === null) {
      throw new ConfigError(
        `SECRETS_KEY_PREVIOUS: key ${i + 1} must be ${form}; keys are separated by commas (value not shown)`,
      );
    }
    return bytes;
  });
  return { key, previous };
}

/** LOG_ORIGIN, else PUBLIC_URL without its scheme (e.g. `localhost:8080`). */
function logOrigin(env: Env, publicUrl: string): string {
  const origin = str(env, 'LOG_ORIGIN', publicUrl.replace(/^[a-z]+:\/\//i, ''));
  if (!/^[\x21-\x7e]+$/.test(origin) || origin.includes('+')) {
    throw new ConfigError(
      `LOG_ORIGIN must be printable ASCII without spaces or "+", got "${origin}"`,
    );
  }
  return origin;
}

/**
 * Origins allowed in passkey ceremonies. WebAuthn only lets an origin whose host is the RP
 * id or a subdomain of it use that RP id, so any other origin could never work: refused at
 * start rather than failing every ceremony later. (That is why `http://127.0.0.1:$PORT` is
 * not a default: the default RP id is `localhost`.)
 */
function webauthnOrigins(env: Env, port: number): string[] {
  const rpId = str(env, 'WEBAUTHN_RP_ID', 'localhost').toLowerCase();
  const origins = list(env, 'WEBAUTHN_ORIGINS', [`http://localhost:${port}`]);
  for (const origin of origins) {
    let host: string;
    try {
      const url = new URL(origin);
      if (url.origin !== origin) throw new Error('not an origin');
      host = url.hostname;
    } catch {
      throw new ConfigError(
        `WEBAUTHN_ORIGINS must hold origins such as https://app.example.com, got "${origin}"`,
      );
    }
    if (host !== rpId && !host.endsWith(`.${rpId}`)) {
      throw new ConfigError(
        `WEBAUTHN_ORIGINS: ${origin} cannot use WEBAUTHN_RP_ID ${rpId} (its host must be the RP id or a subdomain of it)`,
      );
    }
  }
  return origins;
}

/**
 * Traces: on when OTEL_EXPORTER_OTLP_ENDPOINT is set. The exporter's own OTEL_EXPORTER_OTLP_*
 * settings (timeout, compression, certificates) are read by the exporter itself.
 */
function tracingConfig(env: Env): TracingConfig | null {
  const endpoint = optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (endpoint === null) return null;
  let protocol = '';
  try {
    protocol = new URL(endpoint).protocol;
  } catch {
    // refused below
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new ConfigError('OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL');
  }
  const exporterHeaders: Record<string, string> = {};
  for (const pair of list(env, 'OTEL_EXPORTER_OTLP_HEADERS', [])) {
    const eq = pair.indexOf('=');
    const key = eq > 0 ? pair.slice(0, eq).trim() : '';
    let value: string | null = null;
    try {
      value = eq > 0 ? decodeURIComponent(pair.slice(eq + 1).trim()) : null;
    } catch {
      // refused below
    }
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(key) || value === null) {
      // The value is not quoted: it may be a key.
      throw new ConfigError(
        'OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas (value not shown)',
      );
    }
    exporterHeaders[key] = value;
  }
  const rawRatio = str(env, 'OTEL_TRACES_SAMPLER_ARG', '1');
  const sampleRatio = Number(rawRatio);
  if (!/^\d+(\.\d+)?$/.test(rawRatio) || !(sampleRatio >= 0 && sampleRatio <= 1)) {
    throw new ConfigError(
      `OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${rawRatio}"`,
    );
  }
  return {
    endpoint,
    exporterHeaders,
    serviceName: str(env, 'OTEL_SERVICE_NAME', 'ons'),
    sampleRatio,
  };
}

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
    redisUrl: optional(env, 'REDIS_URL'),
    trustProxy: trustProxy(env),
    publicListCacheMs: int(env, 'PUBLIC_LIST_CACHE_MS', 1000, 0, 60_000),
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
