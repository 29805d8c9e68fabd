import { Type, type Static } from 'typebox';
import { ListEnvelope, listQueryProperties } from '../../lib/list.js';
import { IdParam } from '../../lib/ids.js';

export const RoleName = Type.Union(
  [Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member'), Type.Literal('viewer')],
  { description: 'owner | admin | member | viewer (docs/permissions.md)' },
);

export const OrganizationSettings = Type.Object(
  {
    allow_self_signup: Type.Optional(
      Type.Boolean({
        description: 'wallets signing up with this organization id join it as `member`',
      }),
    ),
  },
  { additionalProperties: false },
);
export type OrganizationSettings = Static<typeof OrganizationSettings>;

export const CreateOrganizationInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    settings: Type.Optional(OrganizationSettings),
  },
  { additionalProperties: false },
);
export type CreateOrganizationInput = Static<typeof CreateOrganizationInput>;

export const UpdateOrganizationInput = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    settings: Type.Optional(OrganizationSettings),
  },
  { additionalProperties: false },
);
export type UpdateOrganizationInput = Static<typeof UpdateOrganizationInput>;

export const Organization = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  settings: Type.Object({ allow_self_signup: Type.Boolean() }),
  role: Type.Union([RoleName, Type.Null()], { description: "the caller's role" }),
  when_created: Type.String({ format: 'date-time' }),
  when_modified: Type.String({ format: 'date-time' }),
});
export type Organization = Static<typeof Organization>;

export const OrganizationList = ListEnvelope('organizations', Organization);

export const ListOrganizationsQuery = Type.Object({
  ...listQueryProperties,
  role_name: Type.Optional(RoleName),
});
export type ListOrganizationsQuery = Static<typeof ListOrganizationsQuery>;

export const OrganizationPath = Type.Object({
  organizationId: IdParam('organization'),
});

export const SwitchOrganizationInput = Type.Object(
  { organization_id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export type SwitchOrganizationInput = Static<typeof SwitchOrganizationInput>;

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  wallet: Type.Object({
    id: Type.String(),
    address: Type.String(),
    organization_id: Type.Union([Type.String(), Type.Null()]),
  }),
});

export const IdResponse = Type.Object({ id: Type.String() });
export const Empty = Type.Object({});
