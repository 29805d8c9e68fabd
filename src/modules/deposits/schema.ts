import { Type, type Static } from 'typebox';
import { ListEnvelope, listQueryProperties } from '../../lib/list.js';

/**
 * The DepositToken enumeration: tokens a balance can be funded with. `ONS` is the
 * network's native token (18 decimals); new tokens are added here and in DEPOSIT_TOKENS.
 */
export const DEPOSIT_TOKENS = ['ONS'] as const;
export type DepositTokenName = (typeof DEPOSIT_TOKENS)[number];
export const DepositToken = Type.Union([Type.Literal('ONS')], {
  description: 'DepositToken: ONS (the native token, 18 decimals)',
});

export const Deposit = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  tx_hash: Type.String({ description: 'the chain transaction that paid it (unique)' }),
  token: DepositToken,
  token_address: Type.Union([Type.String(), Type.Null()]),
  amount_wei: Type.String(),
  amount: Type.String({ description: 'in whole tokens' }),
  when_created: Type.String({ format: 'date-time' }),
});
export type Deposit = Static<typeof Deposit>;

export const DepositList = ListEnvelope('deposits', Deposit);

export const ListDepositsQuery = Type.Object({
  ...listQueryProperties,
  tx_hash: Type.Optional(Type.String({ maxLength: 130 })),
  token: Type.Optional(DepositToken),
  token_address: Type.Optional(Type.String({ maxLength: 130 })),
});
export type ListDepositsQuery = Static<typeof ListDepositsQuery>;
