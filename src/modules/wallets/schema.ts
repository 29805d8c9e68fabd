import { Type, type Static } from 'typebox';
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

/** base64url (no padding) of a WebAuthn credential id (at most 1023 bytes). */
export const PublicCredentialParams = Type.Object({
  credentialId: Type.String({
    pattern: '^[A-Za-z0-9_-]+$',
    minLength: 1,
    maxLength: 1366,
    description: "The passkey's credential id, base64url, as the action log's signature shows it",
  }),
});

/** `GET /public/credentials/{credentialId}`: what checks the passkey's action signatures. */
export const PublicCredential = Type.Object({
  credential_id: Type.String(),
  wallet: Type.String({ description: "The wallet's address the passkey belongs to" }),
  algorithm: Type.Object({
    cose: Type.Integer({ description: 'COSE algorithm number: -7, -8 or -257' }),
    name: Type.Union([Type.Literal('ES256'), Type.Literal('EdDSA'), Type.Literal('RS256')]),
  }),
  public_key: Type.String({
    description: 'The public key as SubjectPublicKeyInfo (DER), base64url without padding',
  }),
  when_created: Type.String({ format: 'date-time' }),
  when_removed: Type.String({ description: "When it was removed; '' while it is not" }),
});

export type PublicCredential = Static<typeof PublicCredential>;

const AddressParam = (description: string) =>
  Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description });

export const SignerLinkParams = Type.Object({
  address: AddressParam("The wallet's address, as the action log's `wallet` shows it"),
  signer: AddressParam('The EOA address a signature recovers'),
});

/** `GET /public/wallets/{address}/signers/{signer}`: when an EOA could sign for a wallet. */
export const SignerLinks = Type.Object({
  wallet: Type.String({ description: "The wallet's address (lowercase)" }),
  signer: Type.String({ description: 'The EOA address (lowercase)' }),
  links: Type.Array(
    Type.Object({
      when_linked: Type.String({ format: 'date-time' }),
      when_unlinked: Type.String({ description: "When it was unlinked; '' while it is linked" }),
    }),
    { description: 'Each time the EOA was linked to the wallet, oldest first' },
  ),
});

export type SignerLinks = Static<typeof SignerLinks>;

export const CredentialParams = Type.Object({ credentialId: IdParam('credential') });
