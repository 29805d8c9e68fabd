import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { compileCustomSchema } from './custom-schema.js';

// The test runner does not start node with --expose-gc; the flag set now gives new contexts
// a `gc`.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const heapAfterGc = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

describe('compileCustomSchema', () => {
  it('keeps nothing of a compiled schema once its validator is dropped', () => {
    const compileMany = (from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        compileCustomSchema({
          type: 'object',
          properties: { s: { type: 'string', pattern: `^${i}[a-z]{990}` } },
        });
      }
    };
    compileMany(0, 10); // warms up what is loaded once
    const before = heapAfterGc();
    compileMany(1000, 100);
    // A shared Ajv kept every pattern: about 0.5 MB each, 50 MB for these 100.
    expect(heapAfterGc() - before).toBeLessThan(5 * 1024 * 1024);
  });
});
