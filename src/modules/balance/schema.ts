import { Type, type Static } from 'typebox';
import { dateFilterProperties } from '../../lib/list.js';

export const Balance = Type.Object({
  organization_id: Type.String(),
  token: Type.Literal('ONS'),
  decimals: Type.Integer(),
  balance_wei: Type.String({ description: 'in the smallest unit (wei), a decimal string' }),
  balance: Type.String({ description: 'in whole tokens, a decimal string' }),
  low_balance_wei: Type.Union([Type.String(), Type.Null()], {
    description: 'the threshold below which owners and admins are told (null: none)',
  }),
  low: Type.Boolean({ description: 'the balance is below low_balance_wei' }),
  actions_left: Type.String({
    description: "how many actions the balance still pays for at today's price",
  }),
});
export type Balance = Static<typeof Balance>;

export const HistoryInterval = Type.Union(
  [Type.Literal('hour'), Type.Literal('day'), Type.Literal('week'), Type.Literal('month')],
  { description: 'bucket size (UTC; weeks start on Monday); default day' },
);
export type HistoryInterval = Static<typeof HistoryInterval>;

export const HistoryTimeRange = Type.Union(
  [
    Type.Literal('day'),
    Type.Literal('week'),
    Type.Literal('month'),
    Type.Literal('year'),
    Type.Literal('all'),
  ],
  {
    description:
      'how far back from now; default month, or all when a when_created[$gt|$gte] filter is given',
  },
);
export type HistoryTimeRange = Static<typeof HistoryTimeRange>;

export const BalanceHistoryQuery = Type.Object({
  interval: Type.Optional(HistoryInterval),
  'time-range': Type.Optional(HistoryTimeRange),
  limit: Type.Optional(Type.Integer({ description: 'buckets per page, 1 to 100 (default 20)' })),
  next: Type.Optional(Type.String({ maxLength: 512 })),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  ...dateFilterProperties('when_created'),
});
export type BalanceHistoryQuery = Static<typeof BalanceHistoryQuery>;

export const HistoryBucket = Type.Object({
  start: Type.String({ format: 'date-time' }),
  end: Type.String({ format: 'date-time' }),
  credits_wei: Type.String(),
  debits_wei: Type.String({ description: 'a positive amount: the sum of the debits' }),
  closing_balance_wei: Type.String({ description: 'the balance at `end` (or now)' }),
});
export type HistoryBucket = Static<typeof HistoryBucket>;

export const BalanceHistory = Type.Object({
  history: Type.Array(HistoryBucket),
  next: Type.String(),
  has_more: Type.Boolean(),
});

export const LowBalanceInput = Type.Object(
  {
    low_balance_wei: Type.Union([
      Type.String({ pattern: '^(0|[1-9][0-9]{0,77})$', maxLength: 78 }),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);
export type LowBalanceInput = Static<typeof LowBalanceInput>;
