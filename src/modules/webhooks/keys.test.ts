import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSealed, SecretSealer } from '../../lib/sealed-secret.js';
import { newSigningKey, previousKeyAt, signingKeyAt, webhookKeyNotices } from './keys.js';

describe('newSigningKey', () => {
  it('draws again when the bytes begin with the sealed mark', () => {
    const marked = Buffer.concat([Buffer.from('sealed:', 'latin1'), Buffer.alloc(25, 1)]);
    const plain = Buffer.alloc(32, 7);
    const draws = [marked, plain];
    let n = 0;
    const key = newSigningKey(() => draws[n++]!);
    expect(isSealed(marked)).toBe(true);
    expect(key).toEqual(plain);
    expect(n).toBe(2);
  });
});

describe('webhookKeyNotices', () => {
  const secrets = new SecretSealer({ key: randomBytes(32), previous: [] });
  const ids = ['whk_01J0ABCDEFGHJKMNPQRSTVWXY0', 'whk_01J0ABCDEFGHJKMNPQRSTVWXY1'];
  /** Each webhook's current and previous key, sealed and opened once (so remembered). */
  function opened() {
    return ids.flatMap((id) =>
      [signingKeyAt(id), previousKeyAt(id)].map((place) => {
        const hex = secrets.sealBytes(randomBytes(32), place).toString('hex');
        return { id, hex, place, first: secrets.openKeyHex(hex, place) };
      }),
    );
  }
  const remembered = (k: ReturnType<typeof opened>[number]) =>
    secrets.openKeyHex(k.hex, k.place) === k.first;

  it("forgets a webhook's keys (and only its) once its id is announced", async () => {
    const keys = opened();
    webhookKeyNotices(secrets)(ids[0]!);
    // Notices of one turn are taken together, on the next.
    await new Promise((r) => setImmediate(r));
    expect(keys.map((k) => [k.id, remembered(k)])).toEqual([
      [ids[0], false],
      [ids[0], false],
      [ids[1], true],
      [ids[1], true],
    ]);
  });

  it.each(['all', '', 'wallet w_1'])('%j forgets every opened key', (payload) => {
    const keys = opened();
    webhookKeyNotices(secrets)(payload);
    expect(keys.map(remembered)).toEqual([false, false, false, false]);
  });
});
