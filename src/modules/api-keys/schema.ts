import { Type, type Static } from 'typebox';
import { RESOURCES } from '../../lib/permissions.js';
import { IdParam } from '../../lib/ids.js';

/** One year, the longest and the default lifetime of a key (docs/api.md, "API keys"). */
export const MAX_TTL_HOURS = 8760;
/** Live (unexpired, undeleted) keys an organization may hold (docs/api.md, "API keys"). */
export const MAX_LIVE_KEYS = 10;

const Crud = Type.Object(
  {
    read: Type.Optional(Type.Boolean({ default: false })),
    create: Type.Optional(Type.Boolean({ default: false })),
    update: Type.Optional(Type.Boolean({ default: false })),
    delete: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

/**
 * A permission as the API speaks it (docs/api.md, "API keys"). Unknown resources are refused by the
 * service.
 */
export const PermissionInput = Type.Object(
  {
    resource: Type.String({
      maxLength: 64,
      description: `one of ${RESOURCES.join(', ')} (docs/permissions.md)`,
    }),
    crud: Crud,
  },
  { additionalProperties: false },
);
export type PermissionInput = Static<typeof PermissionInput>;

export const CreateApiKeyInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    ttl_hours: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_TTL_HOURS,
        description: 'lifetime in hours, at most one year (the default)',
      }),
    ),
    permissions: Type.Array(PermissionInput, { maxItems: 64 }),
  },
  { additionalProperties: false },
);
export type CreateApiKeyInput = Static<typeof CreateApiKeyInput>;

export const CreatedApiKey = Type.Object({
  id: Type.String(),
  secret: Type.String({ description: 'shown only in this response' }),
});
export type CreatedApiKey = Static<typeof CreatedApiKey>;

const DateTime = Type.String({ format: 'date-time' });

/** A list item, exactly the fields of docs/api.md, "API keys"; never the secret. */
export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  permissions: Type.Array(
    Type.Object({
      resource: Type.String(),
      crud: Type.Object({
        read: Type.Boolean(),
        create: Type.Boolean(),
        update: Type.Boolean(),
        delete: Type.Boolean(),
      }),
    }),
  ),
  expires_at: DateTime,
  last_used_at: Type.Union([DateTime, Type.Null()], { description: 'null until first use' }),
  when_created: DateTime,
  when_modified: DateTime,
});
export type ApiKey = Static<typeof ApiKey>;

export const ListApiKeysQuery = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 100, description: 'exact name' })),
  limit: Type.Optional(
    Type.Integer({ description: 'page size, 1 to 10 (default 10; larger values mean 10)' }),
  ),
  next: Type.Optional(
    Type.String({ maxLength: 512, description: 'cursor from the previous page' }),
  ),
});
export type ListApiKeysQuery = Static<typeof ListApiKeysQuery>;

export const ApiKeyList = Type.Object({
  keys: Type.Array(ApiKey),
  next: Type.String(),
  has_more: Type.Boolean(),
});
export type ApiKeyList = Static<typeof ApiKeyList>;

export const ApiKeyParams = Type.Object({ id: IdParam('apiKey') });
export type ApiKeyParams = Static<typeof ApiKeyParams>;

export const Empty = Type.Object({});
