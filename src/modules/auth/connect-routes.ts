import type { RegistrationResponseJSON, AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { App } from '../../http/app.js';
import { clientOf } from '../../http/client-context.js';
import type { Identity } from './identity.js';
import {
  AuthenticationOptions,
  EoaChallenge,
  EoaChallengeQuery,
  EoaConnectInput,
  OpenOrganization,
  OpenOrganizationPath,
  PasskeyLoginInput,
  PasskeyRegisterInput,
  RegistrationOptions,
  TokenResponse,
} from './schema.js';

const tags = ['wallets'];
const open = { auth: 'none' } as const;

/** `/wallets/connect/*`: create or return to a wallet with a passkey or a crypto wallet. */
export function registerConnectRoutes(app: App, id: Identity) {
  app.get(
    '/wallets/connect/organizations/:organizationId',
    {
      config: open,
      schema: {
        tags,
        summary:
          'The name of an organization that allows self sign-up (what a sign-up page shows before any prompt)',
        params: OpenOrganizationPath,
        response: { 200: OpenOrganization },
      },
    },
    async (req) => id.passkeys.openOrganization(req.params.organizationId),
  );

  app.get(
    '/wallets/connect/passkey/register/options',
    {
      config: open,
      schema: {
        tags,
        summary: 'Passkey registration options (docs/auth.md)',
        response: { 200: RegistrationOptions },
      },
    },
    async () => id.passkeys.registerOptions(),
  );

  app.post(
    '/wallets/connect/passkey/register/verify',
    {
      config: { ...open, grants: 'self-signup' },
      schema: {
        tags,
        summary: 'Finish passkey registration: creates the wallet and signs in',
        body: PasskeyRegisterInput,
        response: { 200: TokenResponse },
      },
    },
    async (req) =>
      id.passkeys.registerVerify(
        req.body.credential as RegistrationResponseJSON,
        req.body.organization_id,
        clientOf(req),
      ),
  );

  app.get(
    '/wallets/connect/passkey/login/options',
    {
      config: open,
      schema: {
        tags,
        summary: 'Passkey sign-in options (discoverable credential)',
        response: { 200: AuthenticationOptions },
      },
    },
    async () => id.passkeys.loginOptions(),
  );

  app.post(
    '/wallets/connect/passkey/login/verify',
    {
      config: { ...open, grants: 'self-signup' },
      schema: {
        tags,
        summary: 'Sign in with a passkey',
        body: PasskeyLoginInput,
        response: { 200: TokenResponse },
      },
    },
    async (req) =>
      id.passkeys.loginVerify(
        req.body.credential as AuthenticationResponseJSON,
        req.body.organization_id,
        clientOf(req),
      ),
  );

  app.get(
    '/wallets/connect/eoa/challenge',
    {
      config: open,
      schema: {
        tags,
        summary: 'A Sign-In with Ethereum message to sign',
        querystring: EoaChallengeQuery,
        response: { 200: EoaChallenge },
      },
    },
    async (req) => id.eoa.challenge(req.query.address),
  );

  app.post(
    '/wallets/connect/eoa',
    {
      config: { ...open, grants: 'self-signup' },
      schema: {
        tags,
        summary: 'Create or return to a wallet with a signed EOA challenge',
        body: EoaConnectInput,
        response: { 200: TokenResponse },
      },
    },
    async (req, reply) => id.eoa.connect(req.body, clientOf(req, reply)),
  );
}
