import { Type, type Static } from 'typebox';
import { IdParam } from '../../lib/ids.js';
import { ListEnvelope, listQueryProperties } from '../../lib/list.js';
import { ActionNameSchema as ActionName } from '../ebus/index.js';
import { MAX_URL_LENGTH } from './http-client/url-check.js';

/** docs/webhooks.md, "Managing webhooks" and "Rules". */
export const MAX_WEBHOOKS = 5;
export const MAX_RULES = 20;
export const MAX_ADDRESSES = 100;

const DateTime = Type.String({ format: 'date-time' });

export const RuleInput = Type.Object(
  {
    template_id: Type.String({
      maxLength: 64,
      description: 'a template of the organization or a public one',
    }),
    actions: Type.Optional(
      Type.Array(ActionName, {
        maxItems: 6,
        description: 'action names; empty or absent: every action',
      }),
    ),
    addresses: Type.Optional(
      Type.Array(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }), {
        maxItems: MAX_ADDRESSES,
        description: 'signer addresses; empty or absent: every signer',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RuleInput = Static<typeof RuleInput>;

const Rules = Type.Array(RuleInput, { minItems: 1, maxItems: MAX_RULES });
const Url = Type.String({
  maxLength: MAX_URL_LENGTH,
  description: 'a public https address without username or password',
});
const Description = Type.String({ maxLength: 500 });

export const CreateWebhookInput = Type.Object(
  { url: Url, rules: Rules, description: Type.Optional(Description) },
  { additionalProperties: false },
);
export type CreateWebhookInput = Static<typeof CreateWebhookInput>;

/**
 * PUT is partial: the fields given replace, the others stay (docs/webhooks.md, "Managing
 * webhooks").
 */
export const UpdateWebhookInput = Type.Object(
  {
    url: Type.Optional(Url),
    rules: Type.Optional(Rules),
    description: Type.Optional(Description),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookInput>;

export const Rule = Type.Object({
  template_id: Type.String(),
  actions: Type.Array(Type.String()),
  addresses: Type.Array(Type.String()),
});
export type Rule = Static<typeof Rule>;

export const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  rules: Type.Array(Rule),
  description: Type.String(),
  is_active: Type.Boolean(),
  when_created: DateTime,
  when_modified: DateTime,
});
export type Webhook = Static<typeof Webhook>;

export const WebhookWithKey = Type.Object({
  ...Webhook.properties,
  signing_key: Type.String({ description: '64 hex characters; shown only in this answer' }),
});
export type WebhookWithKey = Static<typeof WebhookWithKey>;

export const WebhookList = ListEnvelope('webhooks', Webhook);
export type WebhookList = Static<typeof WebhookList>;

export const ListWebhooksQuery = Type.Object(listQueryProperties);
export type ListWebhooksQuery = Static<typeof ListWebhooksQuery>;

export const WebhookParams = Type.Object({ webhookId: IdParam('webhook') });
export const EventParams = Type.Object({
  webhookId: IdParam('webhook'),
  eventId: IdParam('event'),
});

export const DeliveryStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('retrying'),
  Type.Literal('done'),
  Type.Literal('failed'),
  Type.Literal('stopped'),
]);
export type DeliveryStatus = Static<typeof DeliveryStatus>;

export const ListEventsQuery = Type.Object({
  ...listQueryProperties,
  status: Type.Optional(DeliveryStatus),
});
export type ListEventsQuery = Static<typeof ListEventsQuery>;

/** `open`: every delivery not delivered yet or that ended without delivery (all but `done`). */
export const OpenStatus = Type.Literal('open');

export const ListOrganizationEventsQuery = Type.Object({
  ...listQueryProperties,
  status: Type.Optional(
    Type.Union([DeliveryStatus, OpenStatus], {
      description: 'one status, or `open`: every status but `done`',
    }),
  ),
});
export type ListOrganizationEventsQuery = Static<typeof ListOrganizationEventsQuery>;

export const Attempt = Type.Object({
  when_created: DateTime,
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  duration_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type Attempt = Static<typeof Attempt>;

/**
 * Attempts a delivery keeps, the newest (docs/webhooks.md, "The delivery log, redelivery and
 * replay"): rounds of four by redelivery and replay would otherwise grow the list without end,
 * and every outcome rewrites it whole (repo/claims.ts, recordOutcomes).
 */
export const KEPT_ATTEMPTS = 50;

export const Delivery = Type.Object({
  id: Type.String(),
  webhook_id: Type.String(),
  action_id: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Array(Attempt, {
    description: `the last ${KEPT_ATTEMPTS} attempts at most, oldest first`,
  }),
  next_attempt_at: Type.Union([DateTime, Type.Null()]),
  when_created: DateTime,
});
export type Delivery = Static<typeof Delivery>;

export const DeliveryList = ListEnvelope('events', Delivery);
export type DeliveryList = Static<typeof DeliveryList>;

export const ReplayInput = Type.Object(
  {
    since: Type.String({ format: 'date-time', description: 'inclusive' }),
    until: Type.String({
      format: 'date-time',
      description: 'exclusive; at most 31 days after since',
    }),
  },
  { additionalProperties: false },
);
export type ReplayInput = Static<typeof ReplayInput>;

export const Queued = Type.Object({ queued: Type.Integer() });
export const Empty = Type.Object({});
