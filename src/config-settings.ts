import { isIP, isIPv4 } from 'node:net';
import { ConfigError, int, list, optional, str, type Env } from './config-env.js';
import { keyId } from './lib/sealed-secret.js';

/**
 * The settings of src/config.ts that take more than one variable or more than a type check:
 * anchoring, the log's key and origin, SECRETS_KEY, passkey origins, tracing, the webhook
 * deliveries' retention and the trusted proxies.
 */

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

/** secp256k1's group order: a private key is a whole number in [1, n - 1]. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * On-chain anchoring: on when both ANCHOR_RPC_URL and ANCHOR_PRIVATE_KEY are set, off when
 * neither is; one without the other is a mistake, refused at start. Neither value is ever
 * quoted in a message (the URL may carry a provider's API key).
 */
export function anchor(env: Env): AnchorConfig | null {
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
export function logSigningKey(env: Env): string | null {
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
export function secretsKeys(env: Env): { key: Buffer | null; previous: Buffer[] } {
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
  if (key !== null) distinctKeyIds(key, previous);
  return { key, previous };
}

/**
 * A sealed value names its key by its id (src/lib/sealed-secret.ts, keyId), so no two keys
 * given may share one: the same key twice (whatever its spelling), or two keys whose ids
 * collide, which could not be told apart.
 */
function distinctKeyIds(key: Buffer, previous: readonly Buffer[]): void {
  const seen = new Map<string, { name: string; bytes: Buffer }>();
  const all = [
    { name: 'SECRETS_KEY', bytes: key },
    ...previous.map((bytes, i) => ({ name: `key ${i + 1} of SECRETS_KEY_PREVIOUS`, bytes })),
  ];
  for (const k of all) {
    const id = keyId(k.bytes);
    const first = seen.get(id);
    if (first === undefined) {
      seen.set(id, k);
      continue;
    }
    throw new ConfigError(
      first.bytes.equals(k.bytes)
        ? `${k.name} is the same key as ${first.name} (key id ${id}): give each key once; SECRETS_KEY_PREVIOUS lists only older keys (values not shown)`
        : `${first.name} and ${k.name} are two keys with the same key id ${id}, which names the key a value is sealed under, so they cannot be told apart: drop one (values not shown)`,
    );
  }
}

/** LOG_ORIGIN, else PUBLIC_URL without its scheme (e.g. `localhost:8080`). */
export function logOrigin(env: Env, publicUrl: string): string {
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
export function webauthnOrigins(env: Env, port: number): string[] {
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
export function tracingConfig(env: Env): TracingConfig | null {
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

/** The most WEBHOOK_DELIVERY_RETENTION_DAYS may say (ten years). */
export const MAX_DELIVERY_RETENTION_DAYS = 3650;

/**
 * WEBHOOK_DELIVERY_RETENTION_DAYS (docs/webhooks.md, "How long deliveries are kept"): deliveries
 * that ended (`done`, `failed`, `stopped`) are deleted this many days after they were created;
 * 0 keeps them all. Default 30. Digits only: `1.5`, `-1`, `1e1`, ` 30` or `30d` are refused, not
 * read as some other number of days.
 */
export function deliveryRetentionDays(env: Env): number {
  const name = 'WEBHOOK_DELIVERY_RETENTION_DAYS';
  const raw = env[name];
  if (raw === undefined || raw === '') return 30;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) > MAX_DELIVERY_RETENTION_DAYS) {
    throw new ConfigError(
      `${name} must be a whole number of days from 0 (keep every delivery) to ${MAX_DELIVERY_RETENTION_DAYS}, got "${raw}"`,
    );
  }
  return Number(raw);
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
export function trustProxy(env: Env): TrustProxy {
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
