import { Type, type Static } from 'typebox';
import { BASE64URL_MAYBE_PADDED } from '../../lib/base64url.js';
import { ID_PREFIXES, IdParam } from '../../lib/ids.js';
import { ListEnvelope, listQueryProperties } from '../../lib/list.js';

// Shapes shared by every sign-in route (docs/auth.md, "The four ways in").

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'seconds the access token lasts' }),
  wallet: Type.Object({
    id: Type.String(),
    address: Type.String(),
    organization_id: Type.Union([Type.String(), Type.Null()]),
  }),
});
export type TokenResponse = Static<typeof TokenResponse>;

export const Empty = Type.Object({});
export const Created = Type.Object({ id: Type.String() });

export const Email = Type.String({ minLength: 3, maxLength: 320, description: 'email address' });
export const Phone = Type.String({
  minLength: 8,
  maxLength: 32,
  description: 'E.164 phone number, e.g. +14155550100',
});
/** New passwords: 8 to 256 characters. */
export const NewPassword = Type.String({ minLength: 8, maxLength: 256 });
/** A password being checked: any non-empty value up to the same bound. */
export const GivenPassword = Type.String({ minLength: 1, maxLength: 256 });
/**
 * An organization id's shape (docs/api.md, "Identifiers"); anything else is malformed (400 code 3).
 */
export const OrganizationId = Type.String({
  pattern: `^${ID_PREFIXES.organization}_[0-9A-HJKMNP-TV-Z]{26}$`,
  maxLength: 64,
  description: 'organization id (org_…)',
});
export const SixDigitCode = Type.String({ pattern: '^[0-9]{6}$', description: '6 digits' });

export const LoginInput = Type.Object(
  {
    email: Type.Optional(Email),
    phone_number: Type.Optional(Phone),
    password: GivenPassword,
    organization_id: Type.Optional(OrganizationId),
  },
  { additionalProperties: false },
);
export type LoginInput = Static<typeof LoginInput>;

export const RefreshInput = Type.Object(
  { refresh_token: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);

export const VerifyInput = Type.Object({ code: SixDigitCode }, { additionalProperties: false });

export const PasswordResetInput = Type.Object({ email: Email }, { additionalProperties: false });
export const PasswordResetConfirmInput = Type.Object(
  { email: Email, code: SixDigitCode, password: NewPassword },
  { additionalProperties: false },
);

export const OtpInput = Type.Object(
  { email: Type.Optional(Email), phone_number: Type.Optional(Phone) },
  { additionalProperties: false },
);
export const OtpVerifyInput = Type.Object(
  {
    email: Type.Optional(Email),
    phone_number: Type.Optional(Phone),
    code: SixDigitCode,
    organization_id: Type.Optional(OrganizationId),
  },
  { additionalProperties: false },
);

export const GoogleInput = Type.Object(
  {
    id_token: Type.String({ minLength: 1, maxLength: 8192 }),
    organization_id: Type.Optional(OrganizationId),
  },
  { additionalProperties: false },
);

// WebAuthn responses as a browser's `credential.toJSON()` serialises them; base64url with or
// without padding (the service unpads before use).
const B64url = (maxLength: number) => Type.String({ maxLength, pattern: BASE64URL_MAYBE_PADDED });
const CredentialCommon = {
  id: B64url(1024),
  rawId: B64url(1024),
  type: Type.Literal('public-key'),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  clientExtensionResults: Type.Object({}, { additionalProperties: true, maxProperties: 16 }),
};

export const RegistrationCredential = Type.Object(
  {
    ...CredentialCommon,
    response: Type.Object(
      {
        clientDataJSON: B64url(4096),
        attestationObject: B64url(16384),
        authenticatorData: Type.Optional(B64url(16384)),
        transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 8 })),
        publicKeyAlgorithm: Type.Optional(Type.Integer()),
        publicKey: Type.Optional(B64url(4096)),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const AuthenticationCredential = Type.Object(
  {
    ...CredentialCommon,
    response: Type.Object(
      {
        clientDataJSON: B64url(4096),
        authenticatorData: B64url(16384),
        signature: B64url(2048),
        userHandle: Type.Optional(B64url(1024)),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const PasskeyRegisterInput = Type.Object(
  { credential: RegistrationCredential, organization_id: Type.Optional(OrganizationId) },
  { additionalProperties: false },
);
export const PasskeyLoginInput = Type.Object(
  { credential: AuthenticationCredential, organization_id: Type.Optional(OrganizationId) },
  { additionalProperties: false },
);
export const PasskeyLinkInput = Type.Object(
  { credential: RegistrationCredential },
  { additionalProperties: false },
);

/** Options are the library's JSON; the schema names the fields docs/auth.md lists. */
export const RegistrationOptions = Type.Object(
  {
    challenge: Type.String(),
    rp: Type.Object({ id: Type.String(), name: Type.String() }),
    user: Type.Object({ id: Type.String(), name: Type.String(), displayName: Type.String() }),
    pubKeyCredParams: Type.Array(Type.Object({ type: Type.String(), alg: Type.Integer() })),
    authenticatorSelection: Type.Object(
      { residentKey: Type.String(), userVerification: Type.String() },
      { additionalProperties: true },
    ),
    timeout: Type.Integer(),
  },
  { additionalProperties: true },
);

export const AuthenticationOptions = Type.Object(
  {
    challenge: Type.String(),
    rpId: Type.String(),
    timeout: Type.Integer(),
    userVerification: Type.String(),
  },
  { additionalProperties: true },
);

export const Signature = Type.String({
  pattern: '^0x[0-9a-fA-F]{130}$',
  description: 'EIP-191 personal_sign signature',
});
export const SiweMessage = Type.String({ minLength: 1, maxLength: 4096 });

export const EoaChallengeQuery = Type.Object({
  address: Type.String({ maxLength: 64, description: '0x address of the crypto wallet' }),
});
export const EoaChallenge = Type.Object({
  message: Type.String(),
  nonce: Type.String(),
  expires_at: Type.String({ format: 'date-time' }),
});
export const EoaConnectInput = Type.Object(
  { message: SiweMessage, signature: Signature, organization_id: Type.Optional(OrganizationId) },
  { additionalProperties: false },
);
export const EoaLinkInput = Type.Object(
  { message: SiweMessage, signature: Signature },
  { additionalProperties: false },
);

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

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

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

export const OpenOrganizationPath = Type.Object({ organizationId: OrganizationId });
export const OpenOrganization = Type.Object({ id: Type.String(), name: Type.String() });
