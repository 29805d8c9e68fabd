import { beforeAll, describe, expect, it } from 'vitest';
import type { SlotGate } from '../../src/lib/slot-gate.js';
import { CONTENT_BUILD_WAIT_MS } from '../../src/modules/batches/content-gate.js';
import { useTestService } from '../helpers/harness.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';

/**
 * At most two batch contents are built at once per process, and a build that waits longer
 * than CONTENT_BUILD_WAIT_MS for its turn is answered 503 (docs/batches.md, "Content and
 * `ipfs_url`"). Builds are held here by taking the gate's places.
 */
const PER_BATCH = 2;
const svc = useTestService({ env: { BATCH_MAX_ACTIONS: String(PER_BATCH) } });
const { get } = svc;

let owner: EoaSigner;
/** Three sealed batches, none of whose contents was asked for yet. */
let batches: string[];

async function settle() {
  for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
}

beforeAll(async () => {
  owner = await createSigner(svc);
  await fund(svc, owner.orgId, 10n ** 21n);
  const templateId = await createTemplate(svc, owner.orgId);
  await settle(); // opens batch 1
  const ids = new Set<string>();
  let nonce = 0;
  for (let b = 0; b < 3; b++) {
    const actions = [];
    for (let i = 0; i < PER_BATCH; i++) {
      actions.push(
        await signEoa(svc, owner, {
          name: 'mint',
          params: { template_id: templateId },
          nonce: nonce++,
        }),
      );
    }
    const res = await svc.post('/ebus/actions/batch', { actions }, owner.headers);
    expect(res.statusCode, res.body).toBe(200);
    for (const r of res.json().results as { action: { batch_id: string } }[]) {
      ids.add(r.action.batch_id);
    }
    await settle(); // seals it, opens the next
  }
  batches = [...ids];
  expect(batches).toHaveLength(3);
  for (const id of batches) expect((await get(`/batches/${id}`)).json().hash).toMatch(/^0x/);
});

/**
 * The process's build gate, its two places taken by builds that last until `release` (a
 * content request first reads which of the batch's actions are private now, from the same
 * tables a build reads, so builds cannot be held by a lock without holding that read too).
 */
function holdBothBuilds(): { release: () => void; held: Promise<unknown>[] } {
  const gate = (svc.container.batches.explorer as unknown as { builds: SlotGate }).builds;
  let release!: () => void;
  const until = new Promise<void>((resolve) => (release = resolve));
  return { release, held: [gate.run(() => until), gate.run(() => until)] };
}

describe('GET /batches/{batchId}/content builds', () => {
  it('answers 503 code 14 with Retry-After when two builds hold their slots past the wait', async () => {
    const { release, held } = holdBothBuilds();
    try {
      const started = Date.now();
      const third = await Promise.race([
        get(`/batches/${batches[2]}/content`),
        new Promise<null>((r) => setTimeout(() => r(null), CONTENT_BUILD_WAIT_MS + 3_000)),
      ]);
      expect(third, 'the build was not refused: it did not wait for the gate').not.toBeNull();
      expect(Date.now() - started).toBeGreaterThanOrEqual(CONTENT_BUILD_WAIT_MS - 50);
      expect(third!.statusCode).toBe(503);
      expect(third!.headers['retry-after']).toBe('1');
      expect(third!.json()).toEqual({
        code: 14,
        message: 'too many batch contents are being built; retry later',
        details: { retry_after_seconds: 1 },
      });
    } finally {
      release();
      await Promise.allSettled(held);
    }
    // The places free, every content is answered.
    for (const id of batches) {
      const res = await get(`/batches/${id}/content`);
      expect(res.statusCode, res.body).toBe(200);
    }
  });

  it('lets a cache keep a content a few seconds, never as immutable', async () => {
    const res = await get(`/batches/${batches[0]}/content`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=5');
  });
});
