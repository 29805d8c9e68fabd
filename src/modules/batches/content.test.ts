import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../lib/canonical-json.js';
import type { ActionLogRecord } from '../ebus/index.js';
import { contentBytes, type ContentAction } from './content.js';
import {
  actionsHash,
  affectedObjects,
  compareBytes,
  integrityRoot,
  ipfsUrl,
  type BatchHeader,
} from './formulas.js';
import { HeaderBuilder } from './header.js';

/** The content's record of an action, written out as docs/batches.md names its fields. */
function contentRecord(r: ActionLogRecord) {
  return {
    id: r.id,
    hash: r.hash,
    name: r.name,
    wallet: r.wallet,
    signature_type: r.signature_type,
    signature: r.signature,
    nonce: r.nonce,
    params: r.params,
    expires: r.expires,
    object_id: r.object_id,
    template_id: r.template_id,
    fee_wei: r.fee_wei,
    batch_id: r.batch_id,
    when_created: r.when_created,
  };
}

/** Version 2's record: version 1's and the organization, template version, integrity hash. */
function contentRecordV2(r: ActionLogRecord, integrityHash: string) {
  return {
    ...contentRecord(r),
    organization_id: r.organization_id,
    template_version: r.template_version,
    integrity_hash: integrityHash,
  };
}

const hex = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

/**
 * Params of every shape the content's fast path must write as RFC 8785 does, or hand back to
 * `canonicalJson`: keys out of order, array-index keys (which V8 always puts first), numbers
 * in exponent form, -0, nesting, escapes and characters beyond ASCII.
 */
const PARAMS: ((i: number) => Record<string, unknown>)[] = [
  (i) => ({ note: `"quoted" \\ ünï ${i} 😀`, z: 1, a: [2, { y: null, b: true }] }),
  (i) => ({ '10': i, '2': 'two', b: [{ '1': 1, a: 0 }] }),
  () => ({
    big: 1e21,
    small: 1e-7,
    neg: -0,
    frac: 0.1 + 0.2,
    list: [[], {}, [{ z: 'z', a: 'a' }]],
  }),
  () => ({ é: 1, z: 2, '\uffff': 3, '😀': 4, '\u0001': 'ctl\u0007' }),
];

/** Actions on a few objects, with text that needs escaping and characters beyond ASCII. */
const actions: ContentAction[] = Array.from({ length: 150 }, (_, i) => ({
  record: {
    id: `act_${String(i).padStart(26, '0')}`,
    hash: hex(i),
    name: i % 3 ? 'update' : 'mint',
    wallet: `0x${'ab'.repeat(20)}`,
    organization_id: 'org_01',
    signature_type: 'eoa',
    signature: `0x${'cd'.repeat(65)}`,
    nonce: i,
    params: PARAMS[i % PARAMS.length]!(i),
    expires: '2026-11-25T10:00:00.000Z',
    // Ids beyond ASCII, whose UTF-16 order is not their byte order (U+FFFF < 😀 in bytes).
    object_id: i % 11 === 0 ? `obj_${['\uffff', '😀', 'é'][i % 3]}` : `obj_${i % 7}`,
    template_id: 'tpl_1',
    template_version: i % 2 ? 1 : null,
    fee_wei: '1000',
    batch_id: 'bat_1',
    when_created: '2026-11-25T09:00:00.000Z',
  },
  integrityHash: hex(1000 + i),
}));
const header: BatchHeader = {
  id: 'bat_1',
  sequence: 3,
  prev_hash: hex(1),
  prev_integrity_root: hex(2),
  integrity_root: hex(3),
  actions_hash: hex(4),
  commitment: hex(5),
  actions_count: actions.length,
  total_fee_wei: '150000',
  when_created: '2026-11-25T09:00:00.000Z',
};
const hash = hex(6);
const SALT_KEY = Buffer.alloc(32, 7);

describe('batch content', () => {
  it('version 1 is the RFC 8785 text of {batch, actions}', () => {
    const whole = canonicalJson({
      batch: { ...header, hash },
      actions: actions.map((a) => contentRecord(a.record)),
    });
    expect(contentBytes(1, header, hash, actions).toString('utf8')).toBe(whole);
  });

  it('version 2 is the RFC 8785 text of {version, batch, actions, objects}', () => {
    const objects = affectedObjects(
      actions.map((a) => ({ object_id: a.record.object_id, integrity_hash: a.integrityHash })),
    ).sort((a, b) => compareBytes(a.id, b.id));
    const whole = canonicalJson({
      version: 2,
      batch: { ...header, hash },
      actions: actions.map((a) => contentRecordV2(a.record, a.integrityHash)),
      objects,
    });
    expect(contentBytes(2, header, hash, actions).toString('utf8')).toBe(whole);
  });

  it('versions 3 and 4 keep of a private action only its hashes (3) or its salted commitment (4)', () => {
    const mixed = actions.map((a, i) => ({ ...a, private: i % 7 === 3 }));
    const isPrivate = (id: string | null) =>
      mixed.some((a) => a.private && a.record.object_id === id);
    // Written independently of formulas.ts: HMAC salt, then the commitment over the raw bytes.
    const commit = (a: ContentAction) => {
      const salt = createHmac('sha256', SALT_KEY)
        .update(Buffer.from('ons action salt v1\u0000'))
        .update(a.record.id)
        .digest();
      const raw = (h: string) => Buffer.from(h.slice(2), 'hex');
      const c = createHash('sha256')
        .update('ons private action v1\u0000')
        .update(salt)
        .update(raw(a.record.hash))
        .update(raw(a.integrityHash))
        .digest('hex');
      return `0x${c}`;
    };
    expect(mixed.filter((a) => a.private).length).toBeGreaterThan(10);
    for (const version of [3, 4]) {
      const last = new Map<string, ContentAction>();
      for (const a of mixed) last.set(a.record.object_id!, a);
      const objects = [...last]
        .sort(([x], [y]) => compareBytes(x, y))
        .map(([id, a]) =>
          version === 4 && a.private
            ? { id, commitment: commit(a) }
            : { id, integrity_hash: a.integrityHash },
        );
      const whole = canonicalJson({
        version,
        batch: { ...header, hash },
        actions: mixed.map((a) => {
          const r = a.record;
          if (!a.private) return contentRecordV2(r, a.integrityHash);
          const common = { id: r.id, object_id: r.object_id, fee_wei: r.fee_wei, private: true };
          return version === 3
            ? { ...common, batch_id: r.batch_id, hash: r.hash, integrity_hash: a.integrityHash }
            : { ...common, batch_id: r.batch_id, commitment: commit(a) };
        }),
        objects,
      });
      const text = contentBytes(version, header, hash, mixed, SALT_KEY).toString('utf8');
      expect(text).toBe(whole);
      // Nothing of a private action's text: its params, wallet, signature, name, organization.
      for (const a of mixed.filter((x) => x.private)) {
        const rec = JSON.parse(text).actions.find((x: { id: string }) => x.id === a.record.id);
        expect(Object.keys(rec).sort()).toEqual(
          version === 3
            ? ['batch_id', 'fee_wei', 'hash', 'id', 'integrity_hash', 'object_id', 'private']
            : ['batch_id', 'commitment', 'fee_wei', 'id', 'object_id', 'private'],
        );
      }
      expect(isPrivate(mixed[3]!.record.object_id)).toBe(true);
    }
    // Version 4 cannot seal a private action without the key.
    expect(() => contentBytes(4, header, hash, mixed)).toThrow(/no commitment/);
    expect(() => contentBytes(4, header, hash, mixed, Buffer.alloc(3))).toThrow(/salt key/);
  });

  it('is hashed as its actions come, page by page, to the CID of its bytes, in every version', () => {
    const mixed = actions.map((a, i) => ({ ...a, private: i % 5 === 1 }));
    for (const version of [1, 2, 3, 4]) {
      const request = {
        batch: { id: 'bat_1', sequence: 3, version, when_created: header.when_created },
        prev: { hash: header.prev_hash, integrity_root: header.prev_integrity_root },
        saltKey: SALT_KEY.toString('hex'),
      };
      const built = [1, 7, 64, actions.length].map((page) => {
        const builder = new HeaderBuilder(request);
        for (let i = 0; i < mixed.length; i += page) builder.add(mixed.slice(i, i + page));
        return builder.build();
      });
      for (const h of built.slice(1)) expect(h).toEqual(built[0]);
      const { hash: h, ipfs_url: url, private_actions, ...head } = built[0]!;
      expect(head.actions_count).toBe(actions.length);
      expect(head.total_fee_wei).toBe(String(1000 * actions.length));
      expect(url).toBe(ipfsUrl(contentBytes(version, head, h, mixed, SALT_KEY)));
      expect(private_actions).toEqual(mixed.filter((a) => a.private).map((a) => a.record.id));
      // The roots are over the leaves the content shows: commitments for private actions in 4.
      const content = JSON.parse(contentBytes(version, head, h, mixed, SALT_KEY).toString());
      const leaves = (content.actions as { hash?: string; commitment?: string }[]).map(
        (a) => a.commitment ?? a.hash!,
      );
      expect(head.actions_hash).toBe(actionsHash(leaves));
      if (version >= 2) {
        const objs = content.objects as {
          id: string;
          integrity_hash?: string;
          commitment?: string;
        }[];
        expect(head.integrity_root).toBe(
          integrityRoot(
            objs.map((o) => ({ id: o.id, integrity_hash: (o.commitment ?? o.integrity_hash)! })),
          ),
        );
      }
      if (version === 4) expect(leaves).not.toContain(mixed[1]!.record.hash);
    }
    expect(() => contentBytes(5, header, hash, actions)).toThrow(/unknown batch content version/);
    expect(
      () =>
        new HeaderBuilder({
          batch: { id: 'b', sequence: 1, version: 5, when_created: '' },
          prev: null,
        }),
    ).toThrow(/unknown batch content version 5/);
    expect(() =>
      new HeaderBuilder({
        batch: { id: 'b', sequence: 1, version: 4, when_created: '' },
        prev: null,
      }).add(mixed),
    ).toThrow(/salt key/);
  });
});
