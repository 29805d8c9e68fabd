import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../lib/canonical-json.js';
import type { ActionLogRecord } from '../ebus/index.js';
import { contentBytes, type ContentAction } from './content.js';
import { affectedObjects, compareBytes, ipfsUrl, type BatchHeader } from './formulas.js';
import { HeaderBuilder } from './header.js';

/** The content's record of an action, written out as design.md §6 names its fields. */
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

  it('is hashed as its actions come, page by page, to the CID of its bytes, in either version', () => {
    for (const version of [1, 2]) {
      const request = {
        batch: { id: 'bat_1', sequence: 3, version, when_created: header.when_created },
        prev: { hash: header.prev_hash, integrity_root: header.prev_integrity_root },
      };
      const built = [1, 7, 64, actions.length].map((page) => {
        const builder = new HeaderBuilder(request);
        for (let i = 0; i < actions.length; i += page) builder.add(actions.slice(i, i + page));
        return builder.build();
      });
      for (const h of built.slice(1)) expect(h).toEqual(built[0]);
      const { hash: h, ipfs_url: url, ...head } = built[0]!;
      expect(head.actions_count).toBe(actions.length);
      expect(head.total_fee_wei).toBe(String(1000 * actions.length));
      expect(url).toBe(ipfsUrl(contentBytes(version, head, h, actions)));
    }
    expect(() => contentBytes(3, header, hash, actions)).toThrow(/unknown batch content version/);
    expect(
      () =>
        new HeaderBuilder({
          batch: { id: 'b', sequence: 1, version: 3, when_created: '' },
          prev: null,
        }),
    ).toThrow(/unknown batch content version 3/);
  });
});
