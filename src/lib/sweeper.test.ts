import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Sweeper } from './sweeper.js';

describe('Sweeper', () => {
  it('stops at once when stopped during a pass (not a whole period later)', async () => {
    let release: () => void = () => undefined;
    let passes = 0;
    const sweeper = new Sweeper(
      'test-sweeper',
      'nothing',
      async () => {
        passes++;
        // The first pass is under way when stop() is called.
        if (passes === 1) await new Promise<void>((r) => (release = r));
        return 0;
      },
      pino({ enabled: false }),
      60_000,
    );
    sweeper.start();
    await new Promise((r) => setImmediate(r));
    const t0 = performance.now();
    const stopped = sweeper.stop();
    release();
    await stopped;
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(passes).toBe(1);
  });
});
