import { Type, type Static } from 'typebox';
import { ListEnvelope, listQueryProperties } from '../../lib/list.js';
import { Email, NewPassword, OrganizationId, Phone, TokenResponse } from '../auth/schema.js';
import { IdParam } from '../../lib/ids.js';

export const RegisterInput = Type.Object(
  {
    email: Type.Optional(Email),
    phone_number: Type.Optional(Phone),
    password: NewPassword,
    name: Type.Optional(Type.String({ maxLength: 200 })),
    organization_id: Type.Optional(OrganizationId),
  },
  { additionalProperties: false },
);
export type RegisterInput = Static<typeof RegisterInput>;

export const CreateWalletInput = Type.Object(
  {
    organization_id: OrganizationId,
    email: Type.Optional(Email),
    phone_number: Type.Optional(Phone),
    password: NewPassword,
  },
  { additionalProperties: false },
);
export type CreateWalletInput = Static<typeof CreateWalletInput>;

export const CreatedWallet = Type.Object({ id: Type.String(), ...TokenResponse.properties });

export const Credential = Type.Object({
  id: Type.String(),
  type: Type.Union([
    Type.Literal('password'),
    Type.Literal('passkey'),
    Type.Literal('eoa'),
    Type.Literal('google'),
  ]),
  label: Type.String(),
  when_created: Type.String({ format: 'date-time' }),
});

export const CredentialList = Type.Object({ credentials: Type.Array(Credential) });

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const Wallet = Type.Object({
  id: Type.String(),
  address: Type.String(),
  name: Nullable(Type.String()),
  email: Nullable(Type.String()),
  phone_number: Nullable(Type.String()),
  email_confirmed: Type.Boolean(),
  phone_confirmed: Type.Boolean(),
  organization_id: Nullable(Type.String()),
  roles: Type.Array(Type.String()),
  credentials: Type.Array(Credential),
  when_created: Type.String({ format: 'date-time' }),
});

export const Session = Type.Object({
  id: Type.String(),
  organization_id: Nullable(Type.String()),
  device: Type.String(),
  ip: Nullable(Type.String()),
  current: Type.Boolean(),
  last_used_at: Type.String({ format: 'date-time' }),
  when_created: Type.String({ format: 'date-time' }),
});
export const SessionList = ListEnvelope('sessions', Session);
export const SessionListQuery = Type.Object({ ...listQueryProperties });

export const SessionParams = Type.Object({ sessionId: IdParam('session') });
export const CredentialParams = Type.Object({ credentialId: IdParam('credential') });
