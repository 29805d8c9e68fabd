import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MicroCache } from './http/micro-cache.js';
import { SecretSealer } from './lib/sealed-secret.js';
import { WaitingRetries } from './modules/idempotency/waiting.js';
import { signingKeyAt } from './modules/webhooks/keys.js';
import { createNoticeListener } from './notices.js';
import type { RevocableCaches } from './revocations.js';

/** Nothing listens on port 1: every attempt fails at once. */
const UNREACHABLE = 'postgres://nobody@127.0.0.1:1/none';

/** A public list request through `cache`; counts the computes. */
function list(cache: MicroCache, computed: { n: number }) {
  const req = { url: '/public/objects' } as FastifyRequest;
  const reply = { type: () => reply, serialize: (v: unknown) => v } as unknown as FastifyReply;
  return cache.serve(req, reply, () => {
    computed.n++;
    return Promise.resolve(`answer ${computed.n}`);
  });
}

describe('while the listener cannot listen', () => {
  it('forgets everything at each attempt, a bounded time apart, and stops when stopped', async () => {
    const told: string[] = [];
    const credentials: RevocableCaches = {
      forgetKey: (id) => told.push(`key ${id}`),
      forgetSession: (id) => told.push(`session ${id}`),
      forgetAll: () => told.push('all'),
    };
    const publicList = new MicroCache(60_000);
    const webhookKeys = new SecretSealer({ key: randomBytes(32), previous: [] });
    const place = signingKeyAt('whk_01J0ABCDEFGHJKMNPQRSTVWXYZ');
    const hex = webhookKeys.sealBytes(randomBytes(32), place).toString('hex');
    const opened = webhookKeys.openKeyHex(hex, place);
    expect(webhookKeys.openKeyHex(hex, place)).toBe(opened);
    const idempotency = new WaitingRetries();
    const waits = [idempotency.watch('one'), idempotency.watch('one'), idempotency.watch('two')];

    const listener = createNoticeListener(
      UNREACHABLE,
      { credentials, publicList, webhookKeys, idempotency },
      pino({ level: 'silent' }),
    );
    await listener.start();
    expect(listener.listening).toBe(false);
    // Every retry waiting for another process's request reads its key again, at once.
    const woken = Promise.all(waits.map((w) => w.woken)).then(() => true);
    const later = new Promise<boolean>((resolve) => setImmediate(() => resolve(false)));
    expect(await Promise.race([woken, later])).toBe(true);
    // The public list's cache is not used: a change it would not hear of could be answered.
    const computed = { n: 0 };
    expect(await list(publicList, computed)).toBe('answer 1');
    expect(await list(publicList, computed)).toBe('answer 2');
    expect(publicList.size).toBe(0);
    // The opened webhook key is forgotten (opened again, it is another buffer).
    expect(webhookKeys.openKeyHex(hex, place)).not.toBe(opened);

    await new Promise((r) => setTimeout(r, 1_500));
    // The loss, then each attempt (after ~0.1, 0.2, 0.4, 0.8 s with jitter) forgets again.
    expect(told.length).toBeGreaterThanOrEqual(4);
    expect(told.every((t) => t === 'all')).toBe(true);
    expect(listener.listens).toBe(0);
    await listener.stop();
    const after = told.length;
    await new Promise((r) => setTimeout(r, 600));
    expect(told.length).toBe(after);
  });
});
