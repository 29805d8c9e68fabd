import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { createLogger } from './http/logger.js';
import { keyId } from './lib/sealed-secret.js';

describe('config', () => {
  it('has working defaults for a fresh machine', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.databaseUrl).toBeNull();
    expect(c.pgBinDir).toBeNull();
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(c.storage.dir).toBe(path.resolve('./data/files'));
    expect(c.storage.maxDownloads).toBe(64);
    expect(c.bodyLimitBytes).toBe(1024 * 1024);
    expect(c.webauthn.origins).toEqual(['http://localhost:8080']);
  });

  it('reads STORAGE_MAX_DOWNLOADS, refusing a bound below 1', () => {
    expect(loadConfig({ STORAGE_MAX_DOWNLOADS: '8' }).storage.maxDownloads).toBe(8);
    expect(() => loadConfig({ STORAGE_MAX_DOWNLOADS: '0' })).toThrow(/STORAGE_MAX_DOWNLOADS/);
  });

  it('reads the bounds of one client and of a slow download, refusing values out of range', () => {
    expect(loadConfig({}).storage).toMatchObject({
      maxDownloadsPerClient: 8,
      downloadGraceMs: 30_000,
      downloadMinBytesPerSecond: 8192,
    });
    const set = loadConfig({
      STORAGE_MAX_DOWNLOADS_PER_CLIENT: '2',
      STORAGE_DOWNLOAD_GRACE_MS: '500',
      STORAGE_DOWNLOAD_MIN_BYTES_PER_SECOND: '1',
    }).storage;
    expect(set).toMatchObject({
      maxDownloadsPerClient: 2,
      downloadGraceMs: 500,
      downloadMinBytesPerSecond: 1,
    });
    for (const [name, bad] of [
      ['STORAGE_MAX_DOWNLOADS_PER_CLIENT', '0'],
      ['STORAGE_DOWNLOAD_GRACE_MS', '99'],
      ['STORAGE_DOWNLOAD_MIN_BYTES_PER_SECOND', '0'],
      ['STORAGE_DOWNLOAD_MIN_BYTES_PER_SECOND', '1.5'],
    ] as const) {
      expect(() => loadConfig({ [name]: bad }), name).toThrow(new RegExp(name));
    }
  });

  it('refuses passkey origins that cannot use the RP id, naming the variable', () => {
    expect(() => loadConfig({ WEBAUTHN_ORIGINS: 'http://127.0.0.1:8080' })).toThrow(
      /WEBAUTHN_ORIGINS.*127\.0\.0\.1/,
    );
    expect(() =>
      loadConfig({ WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'https://example.org' }),
    ).toThrow(/WEBAUTHN_ORIGINS/);
    expect(() => loadConfig({ WEBAUTHN_ORIGINS: 'http://localhost:8080/path' })).toThrow(
      /WEBAUTHN_ORIGINS/,
    );
    expect(() => loadConfig({ WEBAUTHN_ORIGINS: 'not a url' })).toThrow(/WEBAUTHN_ORIGINS/);
    const c = loadConfig({
      WEBAUTHN_RP_ID: 'example.com',
      WEBAUTHN_ORIGINS: 'https://example.com, https://app.example.com:8443',
    });
    expect(c.webauthn.origins).toEqual(['https://example.com', 'https://app.example.com:8443']);
  });

  it('ends sessions by age: 30 days after sign-in, 7 days idle, both settable in seconds', () => {
    const day = 24 * 60 * 60 * 1000;
    expect(loadConfig({}).sessions).toEqual({ maxAgeMs: 30 * day, idleTimeoutMs: 7 * day });
    expect(
      loadConfig({ SESSION_MAX_AGE_SECONDS: '86400', SESSION_IDLE_TIMEOUT_SECONDS: '3600' })
        .sessions,
    ).toEqual({ maxAgeMs: day, idleTimeoutMs: 3_600_000 });
    for (const name of ['SESSION_MAX_AGE_SECONDS', 'SESSION_IDLE_TIMEOUT_SECONDS']) {
      for (const bad of ['0', '59', '1.5', 'a week', String(400 * 86400)]) {
        expect(() => loadConfig({ [name]: bad })).toThrow(new RegExp(name));
      }
    }
  });

  it('reads overrides', () => {
    const c = loadConfig({
      PORT: '9000',
      DATA_DIR: '/tmp/x',
      DATABASE_URL: 'postgres://h/db',
      PG_BIN_DIR: '/usr/lib/postgresql/18/bin',
    });
    expect(c.pgBinDir).toBe('/usr/lib/postgresql/18/bin');
    expect(c.port).toBe(9000);
    expect(c.dataDir).toBe('/tmp/x');
    expect(c.databaseUrl).toBe('postgres://h/db');
    expect(c.publicUrl).toBe('http://localhost:9000');
  });

  it('fails fast on a bad value, naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ FEE_FIXED_WEI: '1.5' })).toThrow(/FEE_FIXED_WEI/);
    expect(() => loadConfig({ WEBHOOK_ALLOW_LOOPBACK: 'maybe' })).toThrow(/WEBHOOK_ALLOW_LOOPBACK/);
  });

  it('runs several HTTP processes only when their rate limits can be shared', () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(() => loadConfig({ WORKERS: '2' })).toThrow(/REDIS_URL/);
    expect(loadConfig({ WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6379' }).workers).toBe(2);
    expect(loadConfig({ WORKERS: '2', RATE_LIMIT_ENABLED: 'false' }).workers).toBe(2);
    expect(() => loadConfig({ WORKERS: '0' })).toThrow(/WORKERS/);
    // The refusal names REDIS_URL and the way to accept per-process counts.
    expect(() => loadConfig({ WORKERS: '3', ONS_ROLE: 'api' })).toThrow(
      /WORKERS=3 runs 3 API processes.*memory rate-limit store.*REDIS_URL.*RATE_LIMIT_ALLOW_MEMORY_MULTI=true/,
    );
    const allowed = loadConfig({ WORKERS: '2', RATE_LIMIT_ALLOW_MEMORY_MULTI: 'true' });
    expect(allowed.workers).toBe(2);
    expect(allowed.rateLimits.allowMemoryMulti).toBe(true);
    expect(loadConfig({}).rateLimits.allowMemoryMulti).toBe(false);
    // Worker processes serve no API: any number count nothing.
    expect(loadConfig({ WORKERS: '2', ONS_ROLE: 'worker' }).workers).toBe(2);
    expect(() => loadConfig({ RATE_LIMIT_ALLOW_MEMORY_MULTI: 'yes' })).toThrow(
      /RATE_LIMIT_ALLOW_MEMORY_MULTI/,
    );
  });

  it('takes its role from ONS_ROLE (all by default); the api role runs no background loop', () => {
    const all = loadConfig({});
    expect(all.role).toBe('all');
    expect([all.webhooks.deliveryInProcess, all.batches.sealerInProcess]).toEqual([true, true]);
    const api = loadConfig({ ONS_ROLE: 'api', WEBHOOK_DELIVERY: 'true', BATCH_SEALER: 'true' });
    expect(api.role).toBe('api');
    expect([api.webhooks.deliveryInProcess, api.batches.sealerInProcess]).toEqual([false, false]);
    const worker = loadConfig({ ONS_ROLE: 'worker' });
    expect([worker.webhooks.deliveryInProcess, worker.batches.sealerInProcess]).toEqual([
      true,
      true,
    ]);
    // A worker may run one loop only, so the two can be scaled apart.
    expect(loadConfig({ ONS_ROLE: 'worker', BATCH_SEALER: 'false' }).batches.sealerInProcess).toBe(
      false,
    );
    // The entry point's role wins (`npm run worker`).
    expect(loadConfig({ ONS_ROLE: 'api' }, { role: 'worker' }).role).toBe('worker');
    expect(() => loadConfig({ ONS_ROLE: 'web' })).toThrow(
      /ONS_ROLE must be one of all, api, worker, got "web"/,
    );
  });

  it('bounds how long a client may take, by default within 30 seconds', () => {
    const d = loadConfig({}).http;
    expect(d.requestTimeoutMs).toBeLessThanOrEqual(30_000);
    expect(d.headersTimeoutMs).toBeLessThanOrEqual(d.requestTimeoutMs);
    const c = loadConfig({
      HTTP_REQUEST_TIMEOUT_MS: '4000',
      HTTP_HEADERS_TIMEOUT_MS: '2000',
      HTTP_IDLE_TIMEOUT_MS: '3000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
    }).http;
    expect(c).toEqual({
      requestTimeoutMs: 4000,
      headersTimeoutMs: 2000,
      idleTimeoutMs: 3000,
      keepAliveTimeoutMs: 1000,
    });
  });

  it('refuses timeouts that are not positive or whose headers may outlast the request', () => {
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' })).toThrow(/HTTP_REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ HTTP_IDLE_TIMEOUT_MS: 'soon' })).toThrow(/HTTP_IDLE_TIMEOUT_MS/);
    expect(() =>
      loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '2000' }),
    ).toThrow(/HTTP_HEADERS_TIMEOUT_MS/);
  });

  it('bounds public reads by default: a pool of 4, 5 s a statement, 2 s to wait for a connection', () => {
    expect(loadConfig({}).publicDb).toEqual({
      poolSize: 4,
      statementTimeoutMs: 5_000,
      waitMs: 2_000,
    });
    expect(
      loadConfig({
        PUBLIC_DB_POOL_SIZE: '2',
        PUBLIC_STATEMENT_TIMEOUT_MS: '50',
        PUBLIC_DB_WAIT_MS: '100',
      }).publicDb,
    ).toEqual({ poolSize: 2, statementTimeoutMs: 50, waitMs: 100 });
  });

  // 0 would be no pool at all, and no limit for PostgreSQL (statement_timeout=0).
  it.each([
    ['PUBLIC_DB_POOL_SIZE', '0', '1 and 100'],
    ['PUBLIC_DB_POOL_SIZE', '101', '1 and 100'],
    ['PUBLIC_DB_POOL_SIZE', '2.5', '1 and 100'],
    ['PUBLIC_DB_POOL_SIZE', 'four', '1 and 100'],
    ['PUBLIC_DB_POOL_SIZE', '-1', '1 and 100'],
    ['PUBLIC_STATEMENT_TIMEOUT_MS', '0', '10 and 60000'],
    ['PUBLIC_STATEMENT_TIMEOUT_MS', '9', '10 and 60000'],
    ['PUBLIC_STATEMENT_TIMEOUT_MS', '60001', '10 and 60000'],
    ['PUBLIC_STATEMENT_TIMEOUT_MS', '5s', '10 and 60000'],
    ['PUBLIC_STATEMENT_TIMEOUT_MS', '-5000', '10 and 60000'],
    ['PUBLIC_DB_WAIT_MS', '0', '10 and 60000'],
    ['PUBLIC_DB_WAIT_MS', '60001', '10 and 60000'],
    ['PUBLIC_DB_WAIT_MS', '1.5', '10 and 60000'],
    ['PUBLIC_DB_WAIT_MS', 'never', '10 and 60000'],
  ])('refuses %s=%s (an integer between %s)', (name, value, bounds) => {
    expect(() => loadConfig({ [name]: value })).toThrow(
      `${name} must be an integer between ${bounds}, got "${value}"`,
    );
  });

  it('bounds reports by default: a pool of 4, 10 s a statement, 2 s to wait, 2 for one organization', () => {
    expect(loadConfig({}).reportsDb).toEqual({
      poolSize: 4,
      statementTimeoutMs: 10_000,
      waitMs: 2_000,
      perOrganization: 2,
    });
    expect(
      loadConfig({
        REPORTS_DB_POOL_SIZE: '6',
        REPORTS_STATEMENT_TIMEOUT_MS: '50',
        REPORTS_DB_WAIT_MS: '100',
        REPORTS_PER_ORGANIZATION: '3',
      }).reportsDb,
    ).toEqual({ poolSize: 6, statementTimeoutMs: 50, waitMs: 100, perOrganization: 3 });
  });

  it.each([
    ['REPORTS_DB_POOL_SIZE', '0', '1 and 100'],
    ['REPORTS_DB_POOL_SIZE', '101', '1 and 100'],
    ['REPORTS_DB_POOL_SIZE', 'four', '1 and 100'],
    ['REPORTS_STATEMENT_TIMEOUT_MS', '0', '10 and 300000'],
    ['REPORTS_STATEMENT_TIMEOUT_MS', '300001', '10 and 300000'],
    ['REPORTS_STATEMENT_TIMEOUT_MS', '10s', '10 and 300000'],
    ['REPORTS_DB_WAIT_MS', '0', '10 and 60000'],
    ['REPORTS_DB_WAIT_MS', '60001', '10 and 60000'],
    ['REPORTS_PER_ORGANIZATION', '0', '1 and 100'],
    ['REPORTS_PER_ORGANIZATION', '1.5', '1 and 100'],
  ])('refuses %s=%s (an integer between %s)', (name, value, bounds) => {
    expect(() => loadConfig({ [name]: value })).toThrow(
      `${name} must be an integer between ${bounds}, got "${value}"`,
    );
  });

  it('runs batch headers at the idle priority unless BATCH_HEADER_PRIORITY says otherwise', () => {
    expect(loadConfig({}).batches.headerPriority).toBe('idle');
    expect(loadConfig({ BATCH_HEADER_PRIORITY: 'low' }).batches.headerPriority).toBe('low');
    expect(() => loadConfig({ BATCH_HEADER_PRIORITY: 'high' })).toThrow(
      /BATCH_HEADER_PRIORITY must be one of idle, low, normal, got "high"/,
    );
  });

  it("takes one of pino's levels for LOG_LEVEL and names the variable otherwise", () => {
    expect(loadConfig({}).logLevel).toBe('info');
    expect(loadConfig({ LOG_LEVEL: 'silent' }).logLevel).toBe('silent');
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(
      /LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "verbose"/,
    );
  });

  it('uses WEBAUTHN_RP_ID lowercased, as browsers hash it', () => {
    const c = loadConfig({
      WEBAUTHN_RP_ID: 'Example.COM',
      WEBAUTHN_ORIGINS: 'https://app.example.com',
    });
    expect(c.webauthn.rpId).toBe('example.com');
  });

  it('delivers webhooks in the API process unless WEBHOOK_DELIVERY is false', () => {
    expect(loadConfig({}).webhooks).toEqual({
      allowLoopback: false,
      caFile: null,
      deliveryInProcess: true,
      deliveryRetentionDays: 30,
    });
    expect(loadConfig({ WEBHOOK_DELIVERY: 'false' }).webhooks.deliveryInProcess).toBe(false);
    expect(() => loadConfig({ WEBHOOK_DELIVERY: 'later' })).toThrow(/WEBHOOK_DELIVERY/);
  });

  it('keeps ended webhook deliveries 30 days unless WEBHOOK_DELIVERY_RETENTION_DAYS says otherwise (0: for good)', () => {
    const days = (v: string) =>
      loadConfig({ WEBHOOK_DELIVERY_RETENTION_DAYS: v }).webhooks.deliveryRetentionDays;
    expect(days('')).toBe(30);
    expect(days('0')).toBe(0);
    expect(days('1')).toBe(1);
    expect(days('90')).toBe(90);
    expect(days('3650')).toBe(3650);
  });

  it.each([
    ['-1', 'negative'],
    ['1.5', 'not whole'],
    ['30.0', 'written with a fraction'],
    ['1e1', 'in exponent notation'],
    ['0x1e', 'in hex'],
    [' 30', 'with a space'],
    ['30d', 'with a unit'],
    ['thirty', 'not a number'],
    ['3651', 'past ten years'],
    ['99999999999999999999', 'far too large'],
  ])('refuses WEBHOOK_DELIVERY_RETENTION_DAYS=%j (%s) at start, naming it and the range', (bad) => {
    expect(() => loadConfig({ WEBHOOK_DELIVERY_RETENTION_DAYS: bad })).toThrow(
      `WEBHOOK_DELIVERY_RETENTION_DAYS must be a whole number of days from 0 (keep every delivery) to 3650, got "${bad}"`,
    );
  });

  it('ends the v2 redirects at V2_SUNSET, by default 2026-06-30, and refuses a date it cannot read', () => {
    expect(loadConfig({}).v2Sunset.toISOString()).toBe('2026-06-30T00:00:00.000Z');
    expect(loadConfig({ V2_SUNSET: '2027-01-01T12:00:00+02:00' }).v2Sunset.toISOString()).toBe(
      '2027-01-01T10:00:00.000Z',
    );
    expect(() => loadConfig({ V2_SUNSET: '2026-06-31T00:00:00Z' })).toThrow(/V2_SUNSET/);
    expect(() => loadConfig({ V2_SUNSET: 'June 2026' })).toThrow(/V2_SUNSET/);
  });
});

describe('trace settings', () => {
  it('leave tracing off unless OTEL_EXPORTER_OTLP_ENDPOINT is set', () => {
    expect(loadConfig({}).tracing).toBeNull();
    expect(
      loadConfig({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER_ARG: '0.5' }).tracing,
    ).toBeNull();
  });

  it('turn tracing on with the endpoint: every trace, service ons, headers decoded', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toEqual({
      endpoint: 'http://collector:4318',
      exporterHeaders: {},
      serviceName: 'ons',
      sampleRatio: 1,
    });
    const t = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/otlp',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D%3D, tenant=ons',
      OTEL_SERVICE_NAME: 'ons-eu',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).tracing;
    expect(t).toEqual({
      endpoint: 'https://otel.example.com/otlp',
      exporterHeaders: { 'x-api-key': 'abc==', tenant: 'ons' },
      serviceName: 'ons-eu',
      sampleRatio: 0.25,
    });
  });

  it('refuse a bad endpoint, ratio or header list, never quoting a header value', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
    for (const ratio of ['1.5', '-0.1', 'half', '1e-3']) {
      expect(() => loadConfig({ ...on, OTEL_TRACES_SAMPLER_ARG: ratio })).toThrow(
        /OTEL_TRACES_SAMPLER_ARG/,
      );
    }
    for (const headers of [
      'secret-value',
      '=secret-value',
      'bad key=secret-value',
      'k=%zzsecret-value',
    ]) {
      let message = '';
      try {
        loadConfig({ ...on, OTEL_EXPORTER_OTLP_HEADERS: headers });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/OTEL_EXPORTER_OTLP_HEADERS/);
      expect(message).not.toContain('secret-value');
    }
  });

  it('never log the collector headers, wherever the config is logged', () => {
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer collector-key',
    });
    let out = '';
    const logger = createLogger('info', { write: (s: string) => void (out += s) });
    logger.info({ config }, 'config');
    logger.info(config, 'config at the top');
    logger.info(config.tracing!, 'tracing at the top');
    expect(out.split('\n').filter(Boolean)).toHaveLength(3);
    expect(out).not.toContain('collector-key');
    expect(out).toContain('[Redacted]');
  });
});

describe('anchoring settings', () => {
  const key = `0x${'4c'.repeat(32)}`;
  const url = 'https://rpc.example.com/v2/provider-api-key';

  it('leave anchoring off when neither the RPC URL nor the key is set', () => {
    expect(loadConfig({}).anchor).toBeNull();
    expect(loadConfig({ ANCHOR_CONFIRMATIONS: '5' }).anchor).toBeNull();
  });

  it('turn anchoring on with both, 2 confirmations by default, the key lowercased', () => {
    expect(
      loadConfig({ ANCHOR_RPC_URL: url, ANCHOR_PRIVATE_KEY: key.toUpperCase().replace('0X', '0x') })
        .anchor,
    ).toEqual({
      rpcUrl: url,
      privateKey: key,
      confirmations: 2,
    });
    const local = loadConfig({
      ANCHOR_RPC_URL: 'http://127.0.0.1:8545',
      ANCHOR_PRIVATE_KEY: key,
      ANCHOR_CONFIRMATIONS: '0',
    }).anchor;
    expect(local?.confirmations).toBe(0);
  });

  it('refuse one without the other, naming both', () => {
    expect(() => loadConfig({ ANCHOR_RPC_URL: url })).toThrow(
      /ANCHOR_RPC_URL is set but ANCHOR_PRIVATE_KEY is not/,
    );
    expect(() => loadConfig({ ANCHOR_PRIVATE_KEY: key })).toThrow(
      /ANCHOR_PRIVATE_KEY is set but ANCHOR_RPC_URL is not/,
    );
  });

  it('refuse a bad URL, key or confirmations without quoting the URL or the key', () => {
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    for (const bad of [
      'ws://rpc.example.com/secret-path',
      'rpc.example.com/secret-path',
      'file:///secret-path',
    ]) {
      const message = refused({ ANCHOR_RPC_URL: bad, ANCHOR_PRIVATE_KEY: key });
      expect(message).toMatch(/ANCHOR_RPC_URL/);
      expect(message).not.toContain('secret-path');
    }
    const order = 'fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141';
    for (const bad of [
      key.slice(2),
      `${key}00`,
      `0x${'0'.repeat(64)}`,
      `0x${order}`,
      `0x${'zz'.repeat(32)}`,
    ]) {
      const message = refused({ ANCHOR_RPC_URL: url, ANCHOR_PRIVATE_KEY: bad });
      expect(message).toMatch(/ANCHOR_PRIVATE_KEY/);
      expect(message).not.toContain(bad.slice(4, 20));
      expect(message).not.toContain('provider-api-key');
    }
    // The largest valid key (n - 1) is accepted.
    const last = `0x${order.slice(0, -1)}0`;
    expect(loadConfig({ ANCHOR_RPC_URL: url, ANCHOR_PRIVATE_KEY: last }).anchor?.privateKey).toBe(
      last,
    );
    expect(() => loadConfig({ ANCHOR_CONFIRMATIONS: '-1' })).toThrow(/ANCHOR_CONFIRMATIONS/);
    expect(() => loadConfig({ ANCHOR_CONFIRMATIONS: 'two' })).toThrow(/ANCHOR_CONFIRMATIONS/);
    expect(() => loadConfig({ ANCHOR_CONFIRMATIONS: '1001' })).toThrow(/ANCHOR_CONFIRMATIONS/);
  });

  it('never reach a log line, wherever the config is logged', () => {
    const config = loadConfig({ ANCHOR_RPC_URL: url, ANCHOR_PRIVATE_KEY: key });
    let out = '';
    const logger = createLogger('info', { write: (s: string) => void (out += s) });
    logger.info({ config }, 'config');
    logger.info(config, 'config at the top');
    logger.info({ anchor: config.anchor }, 'anchor');
    logger.info(config.anchor!, 'anchor at the top');
    expect(out.split('\n').filter(Boolean)).toHaveLength(4);
    expect(out).not.toContain(key.slice(2));
    expect(out).not.toContain('provider-api-key');
    expect(out).toContain('[Redacted]');
  });
});

describe('LOG_SIGNING_KEY and S3_SECRET_ACCESS_KEY', () => {
  it('never reach a log line, wherever the config is logged', () => {
    const seed = 'c3'.repeat(32);
    const s3Secret = 'object-store-secret-key';
    const config = loadConfig({
      LOG_SIGNING_KEY: seed,
      S3_ENDPOINT: 'https://s3.example.test',
      S3_SECRET_ACCESS_KEY: s3Secret,
    });
    let out = '';
    const logger = createLogger('info', { write: (s: string) => void (out += s) });
    logger.info({ config }, 'config');
    logger.info(config, 'config at the top');
    logger.info({ log: config.log, storage: config.storage }, 'parts');
    logger.info(config.log, 'the log part at the top');
    logger.info(config.storage, 'the storage part at the top');
    logger.info(config.storage.s3!, 'the object store at the top');
    expect(out.split('\n').filter(Boolean)).toHaveLength(6);
    expect(out).not.toContain(seed);
    expect(out).not.toContain(s3Secret);
    expect(out).toContain('[Redacted]');
  });
});

describe('SECRETS_KEY', () => {
  const hex = 'a1'.repeat(32);
  const b64 = Buffer.from('b2'.repeat(32), 'hex').toString('base64url');
  const refused = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error('accepted');
  };

  it('is unset by default: secrets are stored as they are', () => {
    expect(loadConfig({}).secrets).toEqual({ key: null, previous: [] });
  });

  it('takes 32 bytes as 64 hex digits or base64url, and older keys in SECRETS_KEY_PREVIOUS', () => {
    const c64 = Buffer.from('c3'.repeat(32), 'hex').toString('base64url');
    const c = loadConfig({
      SECRETS_KEY: hex.toUpperCase(),
      SECRETS_KEY_PREVIOUS: `${b64}, ${c64}=`,
    });
    expect(c.secrets.key?.toString('hex')).toBe(hex);
    expect(c.secrets.previous.map((k) => k.toString('hex'))).toEqual([
      'b2'.repeat(32),
      'c3'.repeat(32),
    ]);
    expect(loadConfig({ SECRETS_KEY: b64 }).secrets.key?.toString('hex')).toBe('b2'.repeat(32));
  });

  it('refuses anything else, naming the setting and never quoting the value', () => {
    const std = Buffer.from('fb'.repeat(32), 'hex').toString('base64'); // has + and /
    for (const bad of [
      hex.slice(2),
      `${hex}00`,
      `0x${hex}`,
      `${b64.slice(0, -1)}`,
      std,
      'zz'.repeat(32),
    ]) {
      const message = refused({ SECRETS_KEY: bad });
      expect(message).toMatch(/^SECRETS_KEY must be 32 random bytes/);
      expect(message).not.toContain(bad.slice(2, 30));
      const previous = refused({ SECRETS_KEY: hex, SECRETS_KEY_PREVIOUS: `${b64},${bad}` });
      expect(previous).toMatch(/^SECRETS_KEY_PREVIOUS: key 2 must be/);
      expect(previous).not.toContain(bad.slice(2, 30));
      expect(previous).not.toContain(b64.slice(2, 30));
    }
    expect(refused({ SECRETS_KEY_PREVIOUS: b64 })).toMatch(
      /SECRETS_KEY_PREVIOUS is set but SECRETS_KEY is not/,
    );
  });

  it('refuses two keys with one key id: one key given twice, or two whose ids collide', () => {
    const id = (k: string) => keyId(Buffer.from(k, 'hex'));
    // The same key as SECRETS_KEY, spelled in base64url.
    const again = Buffer.from(hex, 'hex').toString('base64url');
    const twice = refused({ SECRETS_KEY: hex, SECRETS_KEY_PREVIOUS: `${b64},${again}` });
    expect(twice).toMatch(
      new RegExp(
        `^key 2 of SECRETS_KEY_PREVIOUS is the same key as SECRETS_KEY \\(key id ${id(hex)}\\)`,
      ),
    );
    expect(refused({ SECRETS_KEY: hex, SECRETS_KEY_PREVIOUS: `${b64},${b64}` })).toMatch(
      /^key 2 of SECRETS_KEY_PREVIOUS is the same key as key 1 of SECRETS_KEY_PREVIOUS/,
    );
    // Two keys whose ids collide (SHA-256 of 'ons key id collision 72951' and '… 90725', found
    // by a birthday search over 32-bit ids).
    const x = 'db0dbe03a92b3e700c9efa2de392254040bcd43d3598cf5306e5c8cf1070a62c';
    const y = '30f42350797f307ef1177e36d8a5fbd34e13baf28f2fb2796ad3df0ba6bae387';
    expect(id(x)).toBe(id(y));
    const collide = refused({ SECRETS_KEY: x, SECRETS_KEY_PREVIOUS: `${b64},${y}` });
    expect(collide).toMatch(
      new RegExp(
        `^SECRETS_KEY and key 2 of SECRETS_KEY_PREVIOUS are two keys with the same key id ${id(x)}`,
      ),
    );
    for (const message of [twice, collide]) {
      for (const value of [hex, again, b64, x, y])
        expect(message).not.toContain(value.slice(0, 16));
    }
  });

  it('never reaches a log line, wherever the config is logged', () => {
    const config = loadConfig({ SECRETS_KEY: hex, SECRETS_KEY_PREVIOUS: b64 });
    let out = '';
    const logger = createLogger('info', { write: (s: string) => void (out += s) });
    logger.info({ config }, 'config');
    logger.info(config, 'config at the top');
    logger.info({ secrets: config.secrets }, 'secrets');
    expect(out.split('\n').filter(Boolean)).toHaveLength(3);
    expect(out).not.toContain('"type":"Buffer"');
    expect(out).not.toContain('161,161,161');
    expect(out).not.toContain(hex);
    expect(out).not.toContain(b64);
    expect(out).toContain('[Redacted]');
  });
});

describe('every secret the config holds', () => {
  // Each variable that carries a secret, with a value whose secret part is a marker: logged as
  // the whole config, nested in another object, or as any of its parts under its own name,
  // the marker never reaches a line.
  const secrets: [string, string, string][] = [
    ['DATABASE_URL', 'postgres://ons:marker-database@db.example.test:5432/ons', 'marker-database'],
    ['REDIS_URL', 'redis://:marker-redis@redis.example.test:6379', 'marker-redis'],
    ['SMTP_URL', 'smtp://mailer:marker-smtp@smtp.example.test:587', 'marker-smtp'],
    ['LOG_SIGNING_KEY', 'd4'.repeat(32), 'd4'.repeat(32)],
    ['SECRETS_KEY', 'e5'.repeat(32), 'e5'.repeat(32)],
    ['SECRETS_KEY_PREVIOUS', 'f6'.repeat(32), 'f6'.repeat(32)],
    ['ANCHOR_PRIVATE_KEY', `0x${'a7'.repeat(32)}`, 'a7'.repeat(32)],
    ['ANCHOR_RPC_URL', 'https://rpc.example.test/v2/marker-rpc', 'marker-rpc'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'authorization=marker-otel', 'marker-otel'],
    ['S3_SECRET_ACCESS_KEY', 'marker-s3', 'marker-s3'],
  ];
  const env: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example.test',
    S3_ENDPOINT: 'https://s3.example.test',
    ...Object.fromEntries(secrets.map(([name, value]) => [name, value])),
  };
  const config = loadConfig(env);
  let out = '';
  const logger = createLogger('info', { write: (s: string) => void (out += s) });
  logger.info(config, 'config at the top');
  logger.info({ config }, 'config nested');
  for (const [name, part] of Object.entries(config)) {
    if (part !== null && typeof part === 'object') {
      logger.info({ [name]: part }, `${name} under its name`);
      logger.info({ config: { [name]: part } }, `${name} nested deeper`);
    }
  }

  it.each(secrets)('%s never reaches a log line', (_name, _value, marker) => {
    expect(out).toContain('config at the top');
    expect(out).not.toContain(marker);
  });
});
