/**
 * The proof of an action sealed private whose object is public now carries the salt of its
 * commitment (docs/batches.md, "An object made public later"): the leaf must be the commitment
 * that salt makes of the action's hash and the integrity hash the history gives it.
 */
import { sha256 } from '@noble/hashes/sha2';
import { describe, expect, it } from 'vitest';
import { privateCommitmentOf, verifyActionInclusion } from '../src/verify/index.js';

const h = (byte: string) => `0x${byte.repeat(32)}`;
const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;
const bytes = (x: string) => Buffer.from(x.slice(2), 'hex');
const leafHash = (data: string) => sha256(Buffer.concat([Buffer.from([0]), bytes(data)]));

const salt = h('33');
const action = { id: 'act_1', hash: h('22') };
const integrity = h('11');
const commitment = privateCommitmentOf(salt, action.hash, integrity)!;
const other = leafHash(h('44'));
const first = leafHash(commitment);
const root = hex(sha256(Buffer.concat([Buffer.from([1]), first, other])));
const batch = { id: 'batch_1', actions_hash: root, actions_count: 2 };
const proof = {
  leaf_index: 0,
  tree_size: 2,
  audit_path: [hex(other)],
  leaf_hash: hex(first),
  root,
  salt,
};

describe('an opened commitment in an inclusion proof', () => {
  it('holds when the salt opens the leaf to the history', () => {
    expect(verifyActionInclusion(action, proof, batch, integrity)).toEqual({
      item: 'proof act_1 in batch_1',
      ok: true,
    });
  });

  it.each([
    ['another salt', { ...proof, salt: h('34') }, action, integrity],
    ['another action hash', proof, { ...action, hash: h('23') }, integrity],
    ['another integrity hash', proof, action, h('12')],
    ['no integrity hash known', proof, action, undefined],
    ['no salt: the leaf is not the action hash', { ...proof, salt: undefined }, action, integrity],
  ])('fails with %s', (_, p, a, i) => {
    const { salt: s, ...rest } = p;
    const served = s === undefined ? rest : { ...rest, salt: s };
    expect(verifyActionInclusion(a, served, batch, i)).toMatchObject({
      ok: false,
      failed: 'leaf_hash',
    });
  });
});
