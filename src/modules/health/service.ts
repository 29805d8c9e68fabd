import type { Db } from '../../db/pool.js';
import { pingChain } from './chain.js';
import { pingDatabase } from './repo.js';

/** A readiness probe answers within this even when a dependency does not (ms). */
const READY_WITHIN_MS = 2000;
/**
 * The chain's answer is reused this long (ms): a probe every few seconds from each instance
 * would otherwise be a steady stream of calls to a provider that may bill for them.
 */
const CHAIN_CHECK_REUSE_MS = 10_000;

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('readiness check timed out')), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export type CheckState = 'ok' | 'unavailable';

/**
 * What `/readyz` answers. `ready`: every dependency answers. `degraded`: PostgreSQL answers
 * but an optional dependency does not; the instance still serves (200) and the body names
 * what is missing. `unavailable`: PostgreSQL does not answer; 503, out of rotation.
 */
export interface ReadyReport {
  status: 'ready' | 'degraded' | 'unavailable';
  checks: { database: CheckState; redis?: CheckState; chain?: CheckState };
}

export interface ReadinessDeps {
  db: Db;
  /** Whether the shared rate-limit store is connected; null when REDIS_URL is not set. */
  redis: (() => boolean) | null;
  /** The anchoring chain's JSON-RPC URL; null when anchoring is off or not run here. */
  chainRpcUrl: string | null;
  /** How long the chain's answer is reused (ms); tests shorten it. */
  chainReuseMs?: number;
}

/**
 * The readiness of one instance (docs/self-hosting.md, "Health and readiness"). PostgreSQL
 * is required: without it nothing can be served, so the instance leaves rotation. Redis and
 * the chain only degrade it: without Redis rate limits count per process (FallbackStore),
 * without the chain batches wait to be anchored and are retried; requests are served either
 * way, so taking the instance out would only move its load onto others with the same fault.
 */
export class Readiness {
  private chain: { at: number; state: Promise<CheckState> } | null = null;

  constructor(private readonly deps: ReadinessDeps) {}

  async check(): Promise<ReadyReport> {
    const [database, chain] = await Promise.all([
      within(READY_WITHIN_MS, pingDatabase(this.deps.db)).then(
        (): CheckState => 'ok',
        (): CheckState => 'unavailable',
      ),
      this.deps.chainRpcUrl === null ? null : this.chainState(this.deps.chainRpcUrl),
    ]);
    const checks: ReadyReport['checks'] = { database };
    if (this.deps.redis) checks.redis = this.deps.redis() ? 'ok' : 'unavailable';
    if (chain !== null) checks.chain = chain;
    const status =
      database !== 'ok'
        ? 'unavailable'
        : Object.values(checks).every((s) => s === 'ok')
          ? 'ready'
          : 'degraded';
    return { status, checks };
  }

  private chainState(rpcUrl: string): Promise<CheckState> {
    const now = performance.now();
    if (!this.chain || now - this.chain.at >= (this.deps.chainReuseMs ?? CHAIN_CHECK_REUSE_MS)) {
      const state = within(READY_WITHIN_MS, pingChain(rpcUrl, READY_WITHIN_MS)).then(
        (): CheckState => 'ok',
        (): CheckState => 'unavailable',
      );
      this.chain = { at: now, state };
    }
    return this.chain.state;
  }
}
