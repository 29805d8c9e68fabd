import { createHash } from 'node:crypto';
import {
  buildActionText,
  headerHash,
  leafHash,
  rootOfLeafHashes,
  type ActionRecord,
  type Receipt,
} from '@ons/sdk';
import {
  cosignatureLine,
  generateSigner,
  noteSignatureLine,
  noteVerifierKey,
  type SignerKey,
} from '../src/log/signer.js';

/**
 * A transparency log built in memory as the contract describes the service's (issue 33):
 * action records, batches whose `actions_hash` is the root of their range of leaves, signed
 * checkpoints with the `ons-batch` line, and proofs made from RFC 6962's recursive
 * definitions. Tests doctor its answers to fake each fault.
 */

const sha = (...parts: (Uint8Array | string)[]): Uint8Array => {
  const c = createHash('sha256');
  for (const p of parts) c.update(p);
  return new Uint8Array(c.digest());
};
const hex = (b: Uint8Array): string => `0x${Buffer.from(b).toString('hex')}`;
const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');

const split = (n: number): number => 2 ** Math.floor(Math.log2(n - 1));
/** RFC 6962 §2.1.1 PATH(m, D[n]). */
export function refPath(m: number, d: Uint8Array[]): Uint8Array[] {
  if (d.length <= 1) return [];
  const k = split(d.length);
  return m < k
    ? [...refPath(m, d.slice(0, k)), rootOfLeafHashes(d.slice(k))]
    : [...refPath(m - k, d.slice(k)), rootOfLeafHashes(d.slice(0, k))];
}
/** RFC 6962 §2.1.2 SUBPROOF(m, D[n], b). */
export function refSubproof(m: number, d: Uint8Array[], b = true): Uint8Array[] {
  const n = d.length;
  if (m === n) return b ? [] : [rootOfLeafHashes(d)];
  const k = split(n);
  return m <= k
    ? [...refSubproof(m, d.slice(0, k), b), rootOfLeafHashes(d.slice(k))]
    : [...refSubproof(m - k, d.slice(k), false), rootOfLeafHashes(d.slice(0, k))];
}

export interface FakeBatch {
  id: string;
  sequence: number;
  prev_hash: string;
  prev_integrity_root: string;
  integrity_root: string;
  actions_hash: string;
  commitment: string;
  actions_count: number;
  total_fee_wei: string;
  when_created: string;
  hash: string;
  log_tree_size: number;
}

export type FakeAction = ActionRecord & { log_index: number };

export class FakeLog {
  readonly network = 'ons-test';
  readonly signer: SignerKey;
  readonly actions: FakeAction[] = [];
  readonly batches: FakeBatch[] = [];

  constructor(
    readonly origin = 'log.test.example',
    /** Changes every entry: another history under the same origin (a fork). */
    readonly variant = '',
  ) {
    this.signer = generateSigner(origin);
  }

  get vkey(): string {
    return noteVerifierKey(this.signer);
  }
  get size(): number {
    return this.actions.length;
  }
  /** Leaves that are a private action's commitment instead of its hash, by index. */
  readonly privateLeaves = new Map<number, string>();
  /** The entries: each action's 32 hash bytes (or a private action's commitment). */
  entries(): Uint8Array[] {
    return this.actions.map(
      (a, i) => new Uint8Array(Buffer.from((this.privateLeaves.get(i) ?? a.hash).slice(2), 'hex')),
    );
  }
  leafHashes(size = this.size): Uint8Array[] {
    return this.entries().slice(0, size).map(leafHash);
  }
  root(size = this.size): Uint8Array {
    return rootOfLeafHashes(this.leafHashes(size));
  }

  /** Seals `count` new actions into one batch. */
  addBatch(count: number): FakeBatch {
    const before = this.size;
    for (let i = 0; i < count; i++) {
      const n = this.actions.length;
      const fields = {
        id: `act_${String(n).padStart(6, '0')}`,
        wallet: `0x${'1'.repeat(40)}`,
        organization_id: 'org_test',
        nonce: n,
        name: 'update',
        params: { n, note: `entry${this.variant}` },
        expires: '2030-01-01T00:00:00.000Z',
      };
      const text = buildActionText({
        network: this.network,
        organizationId: fields.organization_id,
        wallet: fields.wallet,
        nonce: fields.nonce,
        name: fields.name,
        params: fields.params,
        expires: fields.expires,
      });
      this.actions.push({
        ...fields,
        hash: hex(sha(text)),
        signature_type: 'eoa',
        signature: `0x${'00'.repeat(65)}`,
        object_id: null,
        template_id: null,
        template_version: null,
        fee_wei: '0',
        batch_id: null,
        when_created: '2026-11-27T00:00:00.000Z',
        log_index: n,
      } as unknown as FakeAction);
    }
    const prev = this.batches[this.batches.length - 1];
    const sequence = (prev?.sequence ?? 0) + 1;
    const z = `0x${'0'.repeat(64)}`;
    const header = {
      id: `bat_${String(sequence).padStart(6, '0')}`,
      sequence,
      prev_hash: prev?.hash ?? z,
      prev_integrity_root: prev?.integrity_root ?? z,
      integrity_root: hex(sha(`integrity ${sequence}`)),
      actions_hash: hex(rootOfLeafHashes(this.leafHashes().slice(before))),
      commitment: hex(sha(`commitment ${sequence}`)),
      actions_count: count,
      total_fee_wei: '0',
      when_created: '2026-11-27T00:00:00.000Z',
    };
    const batch: FakeBatch = {
      ...header,
      hash: headerHash(header),
      log_tree_size: this.size,
    };
    for (const a of this.actions.slice(before)) a.batch_id = batch.id;
    this.batches.push(batch);
    return batch;
  }

  body(size = this.size, root = this.root(size)): string {
    const batch = this.batches.find((b) => b.log_tree_size === size);
    const ext = batch ? `ons-batch ${batch.sequence} ${batch.hash}\n` : '';
    return `${this.origin}\n${size}\n${b64(root)}\n${ext}`;
  }

  /** The signed checkpoint at `size` (default: now), cosigned by `witnesses`. */
  checkpoint(size = this.size, witnesses: SignerKey[] = [], body = this.body(size)): string {
    const lines = [
      noteSignatureLine(this.signer, body),
      ...witnesses.map((w) => cosignatureLine(w, body, 1_800_000_000)),
    ];
    return `${body}\n${lines.join('\n')}\n`;
  }

  inclusion(index: number, size = this.size): string[] {
    return refPath(index, this.leafHashes(size)).map(hex);
  }
  consistency(from: number, to = this.size): string[] {
    if (from === 0 || from === to) return [];
    return refSubproof(from, this.leafHashes(to)).map(hex);
  }

  /** Entry tile `n` of the tree of `size` (C2SP entry bundle). */
  entryTile(n: number, size = this.size): Uint8Array {
    const parts = this.entries()
      .slice(n * 256, Math.min(size, n * 256 + 256))
      .map((e) => Buffer.concat([Buffer.from([0, e.length]), e]));
    return new Uint8Array(Buffer.concat(parts));
  }

  receipt(index: number, size = this.size, witnesses: SignerKey[] = []): Receipt {
    return {
      version: 1,
      network: this.network,
      action: { ...this.actions[index]! },
      log_index: index,
      tree_size: size,
      inclusion_proof: this.inclusion(index, size),
      checkpoint: this.checkpoint(size, witnesses),
    };
  }
}
