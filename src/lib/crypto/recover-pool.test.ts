import { afterEach, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { recoverAddress, recoveryInput, type RecoveryInput } from './eip191.js';
import { RecoverPool } from './recover-pool.js';

async function signed(count: number) {
  const account = privateKeyToAccount(generatePrivateKey());
  const out: RecoveryInput[] = [];
  for (let i = 0; i < count; i++) {
    const text = `ONS action v1\nnonce: ${i}`;
    const prepared = recoveryInput(text, await account.signMessage({ message: text }));
    if (!prepared.ok) throw new Error(prepared.reason);
    out.push(prepared.input);
  }
  return { address: account.address.toLowerCase(), inputs: out };
}

let pool: RecoverPool | null = null;
afterEach(async () => {
  await pool?.close();
  pool = null;
});

describe('RecoverPool', () => {
  it('recovers on its thread what inline recovery recovers, in order, batch after batch', async () => {
    pool = new RecoverPool();
    const { address, inputs } = await signed(40);
    const first = await Promise.all(inputs.slice(0, 25).map((i) => pool!.recover(i)));
    const second = await Promise.all(inputs.slice(25).map((i) => pool!.recover(i)));
    expect([...first, ...second]).toEqual(inputs.map(() => address));
    expect(inputs.map(recoverAddress)).toEqual(inputs.map(() => address));
  });

  it('gathers what comes while the thread is full into fewer messages, all answered in order', async () => {
    pool = new RecoverPool();
    const { address, inputs } = await signed(60);
    // One request per turn of the event loop, as requests arrive under load.
    const answers: Promise<string | null>[] = [];
    for (const input of inputs) {
      answers.push(pool.recover(input));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(answers)).toEqual(inputs.map(() => address));
    expect(pool.sent.inputs).toBe(60);
    expect(pool.sent.messages).toBeLessThan(60);
  });

  it('sends a burst made in one turn as messages of at most ten, answered in order', async () => {
    pool = new RecoverPool();
    const { address, inputs } = await signed(25);
    const settled: number[] = [];
    const answers = inputs.map((input, i) =>
      pool!.recover(input).then((a) => {
        settled.push(i);
        return a;
      }),
    );
    expect(await Promise.all(answers)).toEqual(inputs.map(() => address));
    expect(pool.sent).toEqual({ messages: 3, inputs: 25 });
    expect(settled).toEqual(inputs.map((_, i) => i));
  });

  it('answers null for a signature that recovers no key, and the others still recover', async () => {
    pool = new RecoverPool();
    const { address, inputs } = await signed(2);
    const broken: RecoveryInput = { ...inputs[0]!, signature: new Uint8Array(64) };
    const out = await Promise.all([broken, inputs[1]!].map((i) => pool!.recover(i)));
    expect(out).toEqual([null, address]);
  });

  it('recovers inline once closed', async () => {
    pool = new RecoverPool();
    const { address, inputs } = await signed(1);
    await pool.close();
    expect(await pool.recover(inputs[0]!)).toBe(address);
  });
});
