import { Type, type Static } from 'typebox';
import { dateFilterProperties } from '../../lib/list.js';

export const Balance = Type.Object({
  organization_id: Type.String(),
  token: Type.Literal('ONS'),
  decimals: Type.Integer(),
  balance_wei: Type.String({ description: 'in the smallest unit (wei), a decimal string' }),
  balance: Type.String({ description: 'in whole tokens, a decimal string' }),
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
