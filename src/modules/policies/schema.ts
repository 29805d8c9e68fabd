import { Type, type Static } from 'typebox';
import { IdParam } from '../../lib/ids.js';
import { ACTION_NAMES } from '../objects/index.js';
import { PERIODS, TARGET_TYPES } from './gate.js';

/** Policies an organization may hold (each action checks those that bind it). */
export const MAX_POLICIES = 100;
/** Templates one list of a policy may name. */
export const MAX_TEMPLATES = 100;

const Wei = (description: string) =>
  Type.String({ pattern: '^(0|[1-9][0-9]{0,77})$', maxLength: 78, description });

const ActionNames = Type.Array(Type.Union(ACTION_NAMES.map((n) => Type.Literal(n))), {
  maxItems: ACTION_NAMES.length,
  uniqueItems: true,
});
const TemplateIds = Type.Array(IdParam('template'), {
  maxItems: MAX_TEMPLATES,
  uniqueItems: true,
});

/** The limits of a policy: what POST sets besides its target, and what PUT replaces. */
const limitProperties = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  period: Type.Optional(
    Type.Union(
      PERIODS.map((p) => Type.Literal(p)),
      { description: 'the rolling window of spend_cap_wei and max_actions' },
    ),
  ),
  spend_cap_wei: Type.Optional(Wei('most wei the bound actions may spend per period')),
  max_actions: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'most actions per period' }),
  ),
  allowed_actions: Type.Optional(ActionNames),
  denied_actions: Type.Optional(ActionNames),
  allowed_templates: Type.Optional(TemplateIds),
  denied_templates: Type.Optional(TemplateIds),
  max_fee_wei: Type.Optional(Wei('largest fee one action may cost')),
};

export const PolicyLimitsInput = Type.Object(limitProperties, { additionalProperties: false });
export type PolicyLimitsInput = Static<typeof PolicyLimitsInput>;

export const CreatePolicyInput = Type.Object(
  {
    target_type: Type.Union(
      TARGET_TYPES.map((t) => Type.Literal(t)),
      {
        description:
          'what the policy binds: every action of the organization, those signed by a member wallet, those submitted with an API key, or those on a template',
      },
    ),
    target_id: Type.Optional(
      Type.String({
        maxLength: 30,
        description: 'the wallet, API key or template id; none for the organization',
      }),
    ),
    ...limitProperties,
  },
  { additionalProperties: false },
);
export type CreatePolicyInput = Static<typeof CreatePolicyInput>;

export const PolicyParams = Type.Object({ id: IdParam('policy') });

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const Policy = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  name: Type.String(),
  target_type: Type.String(),
  target_id: Type.Union([Type.String(), Type.Null()]),
  period: Type.Union([Type.String(), Type.Null()]),
  spend_cap_wei: Nullable(Type.String()),
  max_actions: Type.Union([Type.Integer(), Type.Null()]),
  allowed_actions: Type.Union([Type.Array(Type.String()), Type.Null()]),
  denied_actions: Type.Union([Type.Array(Type.String()), Type.Null()]),
  allowed_templates: Type.Union([Type.Array(Type.String()), Type.Null()]),
  denied_templates: Type.Union([Type.Array(Type.String()), Type.Null()]),
  max_fee_wei: Nullable(Type.String()),
  set_by_owner: Type.Boolean({
    description: 'an owner (a person) set these limits: only an owner changes or removes them',
  }),
  usage: Type.Union([
    Type.Object({
      period: Type.String(),
      window_start: Type.String({
        format: 'date-time',
        description: 'start of the oldest bucket counted (the window is counted in 60 steps)',
      }),
      spent_wei: Type.String(),
      actions: Type.Integer(),
    }),
    Type.Null(),
  ]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type Policy = Static<typeof Policy>;

export const PolicyList = Type.Object({ policies: Type.Array(Policy) });
export const Empty = Type.Object({});
