import { Type, type Static } from 'typebox';
import { ListEnvelope, listQueryProperties } from '../../lib/list.js';
import { IdParam } from '../../lib/ids.js';

export const SendSupportMessageInput = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    content: Type.String({ minLength: 1, maxLength: 20_000 }),
    wallet_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "default: the caller's wallet; required with an API key",
      }),
    ),
  },
  { additionalProperties: false },
);
export type SendSupportMessageInput = Static<typeof SendSupportMessageInput>;

export const SupportMessage = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  wallet_id: Type.String(),
  title: Type.String(),
  content: Type.String(),
  when_created: Type.String({ format: 'date-time' }),
});
export type SupportMessage = Static<typeof SupportMessage>;

export const SupportMessageList = ListEnvelope('messages', SupportMessage);

export const ListSupportMessagesQuery = Type.Object({
  ...listQueryProperties,
  wallet_id: Type.Optional(Type.String({ maxLength: 64 })),
});
export type ListSupportMessagesQuery = Static<typeof ListSupportMessagesQuery>;

export const SupportMessagePath = Type.Object({ messageId: IdParam('message') });

export const RequestAccessInput = Type.Object(
  {
    feature: Type.String({ minLength: 1, maxLength: 200, description: 'feature or service name' }),
    email: Type.String({ format: 'email', minLength: 3, maxLength: 254 }),
    details: Type.Optional(Type.String({ maxLength: 5000 })),
  },
  { additionalProperties: false },
);
export type RequestAccessInput = Static<typeof RequestAccessInput>;
