import { Counter, Gauge, type Registry } from 'prom-client';
import type { ListenerState } from './db/listener.js';

/**
 * The channel revocations are announced on. Migration 0041's triggers send on it from the
 * transaction that ends a session, revokes or changes an API key, or changes an active
 * membership, so PostgreSQL delivers the notice when, and only if, that transaction commits.
 */
export const REVOCATION_CHANNEL = 'ons_revocations';

/**
 * What this process remembers about credentials, and how to drop it: the same calls the
 * instance that made a change makes at once (src/container.ts wires them; src/notices.ts
 * calls them when a notice arrives, or everything while notices may be missed).
 */
export interface RevocableCaches {
  /** An API key was revoked or changed (the `x-api-key` verifier's entry). */
  forgetKey(keyId: string): void;
  /** A session ended (the bearer verifier's entry). */
  forgetSession(sessionId: string): void;
  /** A membership or role changed, or notices may have been missed: every credential check. */
  forgetAll(): void;
}

/**
 * Acts on one notice: `key <id>`, `session <id>` or `all` (the triggers' payloads, migration
 * 0041). Anything else (a later release's notice during a rolling update) forgets everything,
 * which is never wrong, only slower.
 */
export function applyNotice(caches: RevocableCaches, payload: string): void {
  const space = payload.indexOf(' ');
  const kind = space < 0 ? payload : payload.slice(0, space);
  const id = space < 0 ? '' : payload.slice(space + 1);
  if (kind === 'key' && id) caches.forgetKey(id);
  else if (kind === 'session' && id) caches.forgetSession(id);
  else caches.forgetAll();
}

/**
 * The listener on /metrics: whether it listens, and how many times it started to. The names
 * say revocations; the same connection carries the other notices (src/notices.ts), so they
 * tell of those too: a process listens for all of them or for none.
 */
export function registerRevocationMetrics(registry: Registry, listener: ListenerState): void {
  new Gauge({
    name: 'ons_revocation_listener_up',
    help: 'Whether this process listens for revocations made on other processes (1) or not (0)',
    registers: [registry],
    collect() {
      this.set(listener.listening ? 1 : 0);
    },
  });
  let reported = 0;
  new Counter({
    name: 'ons_revocation_listens_total',
    help: 'Times this process started listening for revocations (1 + reconnections)',
    registers: [registry],
    collect() {
      this.inc(listener.listens - reported);
      reported = listener.listens;
    },
  });
}
