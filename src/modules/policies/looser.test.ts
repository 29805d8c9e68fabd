import { describe, expect, it } from 'vitest';
import { LIMIT_FIELDS, looserLimits, type LimitField, type PolicyLimits } from './looser.js';
import { PolicyLimitsInput } from './schema.js';

const T1 = 'tpl_01JA0000000000000000000001';
const T2 = 'tpl_01JA0000000000000000000002';
const T3 = 'tpl_01JA0000000000000000000003';
const T4 = 'tpl_01JA0000000000000000000004';

/** A policy with every limit set. */
const STORED: PolicyLimits = {
  period: 'hour',
  spend_cap_wei: '1000',
  max_actions: 10,
  allowed_actions: ['mint', 'transfer'],
  denied_actions: ['redeem', 'drop'],
  allowed_templates: [T1, T2],
  denied_templates: [T3, T4],
  max_fee_wei: '5000',
};

/** For each field, values that allow more than STORED's, and values that do not. */
const CASES: {
  [F in LimitField]: { looser: PolicyLimits[F][]; notLooser: PolicyLimits[F][] };
} = {
  period: {
    // Shorter: the cap again every minute. Longer: the use so far is forgotten.
    looser: ['minute', 'day', '30d', null],
    notLooser: ['hour'],
  },
  spend_cap_wei: {
    looser: ['1001', '100000000000000000000000000', null],
    notLooser: ['1000', '999', '0'],
  },
  max_actions: { looser: [11, null], notLooser: [10, 9, 0] },
  allowed_actions: {
    looser: [['mint', 'transfer', 'drop'], ['drop'], null],
    notLooser: [['transfer', 'mint'], ['mint'], []],
  },
  denied_actions: {
    looser: [['redeem'], ['redeem', 'update'], [], null],
    notLooser: [
      ['drop', 'redeem'],
      ['redeem', 'drop', 'update'],
    ],
  },
  allowed_templates: {
    looser: [[T1, T2, T3], [T3], null],
    notLooser: [[T2, T1], [T1], []],
  },
  denied_templates: {
    looser: [[T3], [T3, T1], [], null],
    notLooser: [
      [T4, T3],
      [T3, T4, T1],
    ],
  },
  max_fee_wei: { looser: ['5001', null], notLooser: ['5000', '1', '0'] },
};

const label = (v: unknown) => (v === null ? 'none' : JSON.stringify(v));

describe('looserLimits', () => {
  it('has cases for every limit a policy takes, and the API takes no other', () => {
    expect(Object.keys(CASES)).toEqual(LIMIT_FIELDS);
    const body = Object.keys(PolicyLimitsInput.properties).filter((k) => k !== 'name');
    expect([...body].sort()).toEqual([...LIMIT_FIELDS].sort());
  });

  for (const field of LIMIT_FIELDS) {
    const { looser, notLooser } = CASES[field];
    for (const value of looser) {
      it(`${field}: ${label(STORED[field])} → ${label(value)} is looser`, () => {
        expect(looserLimits(STORED, { ...STORED, [field]: value })).toEqual([field]);
      });
    }
    for (const value of notLooser) {
      it(`${field}: ${label(STORED[field])} → ${label(value)} is not looser`, () => {
        expect(looserLimits(STORED, { ...STORED, [field]: value })).toEqual([]);
      });
    }
    it(`${field}: adding it where there was none is not looser`, () => {
      expect(looserLimits({ ...STORED, [field]: null }, STORED)).toEqual([]);
    });
  }

  it('names every field that allows more, in the API order', () => {
    const all = Object.fromEntries(
      LIMIT_FIELDS.map((f) => [f, CASES[f].looser[0]]),
    ) as unknown as PolicyLimits;
    expect(looserLimits(STORED, all)).toEqual(LIMIT_FIELDS);
    expect(looserLimits(STORED, STORED)).toEqual([]);
  });
});
