import { Type } from 'typebox';
import { IdParam } from '../../lib/ids.js';

export const Empty = Type.Object({});

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

export const CredentialParams = Type.Object({ credentialId: IdParam('credential') });
