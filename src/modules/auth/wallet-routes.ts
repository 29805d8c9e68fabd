import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { clientOf } from '../../http/client-context.js';
import type { Identity } from './identity.js';
import {
  Created,
  CreatedWallet,
  CreateWalletInput,
  Empty,
  EoaLinkInput,
  PasskeyLinkInput,
  RegisterInput,
  RegistrationOptions,
  SessionList,
  SessionListQuery,
  SessionParams,
  TokenResponse,
} from './schema.js';

const tags = ['wallets'];
const person = { auth: 'person', permission: 'authenticated' } as const;

/**
 * The `/wallets` routes that belong to sign-in: sign-up with a password, adding a passkey or
 * a crypto wallet (a ceremony), and the signed-in wallet's sessions.
 */
export function registerAuthWalletRoutes(app: App, id: Identity) {
  app.post(
    '/organizations/wallets',
    {
      config: { auth: 'none', grants: 'self-signup' },
      schema: {
        tags,
        summary:
          'Create an account: standalone, or a member of `organization_id` where it allows self sign-up',
        body: RegisterInput,
        response: { 200: TokenResponse },
      },
    },
    async (req) => id.signUp.registerStandalone(req.body, clientOf(req)),
  );

  app.post(
    '/wallets',
    {
      config: { auth: 'optional', permission: 'authenticated', grants: 'add-wallet' },
      schema: {
        tags,
        summary:
          'Create a password wallet in an existing organization (by a caller with members.create there and the member role within its permissions, or where self sign-up is allowed)',
        body: CreateWalletInput,
        response: { 200: CreatedWallet },
      },
    },
    async (req) => id.signUp.createInOrganization(req.auth, req.body, clientOf(req)),
  );

  app.get(
    '/wallets/me/credentials/passkey/options',
    {
      config: person,
      schema: { tags, summary: 'Options to add a passkey', response: { 200: RegistrationOptions } },
    },
    async (req) => id.passkeys.linkOptions(authOf(req)),
  );

  app.post(
    '/wallets/me/credentials/passkey',
    {
      config: person,
      schema: {
        tags,
        summary: 'Add a passkey',
        body: PasskeyLinkInput,
        response: { 200: Created },
      },
    },
    async (req) =>
      id.passkeys.linkVerify(authOf(req), req.body.credential as RegistrationResponseJSON),
  );

  app.post(
    '/wallets/me/credentials/eoa',
    {
      config: person,
      schema: {
        tags,
        summary: 'Link a crypto wallet (signed EOA challenge)',
        body: EoaLinkInput,
        response: { 200: Created },
      },
    },
    async (req) => id.eoa.link(authOf(req), req.body),
  );

  app.get(
    '/wallets/sessions',
    {
      config: person,
      schema: {
        tags,
        summary: 'Sign-in sessions of the signed-in wallet',
        querystring: SessionListQuery,
        response: { 200: SessionList },
      },
    },
    async (req) => {
      const page = await id.sessions.list(authOf(req), req.query);
      return { sessions: page.items, next: page.next, has_more: page.has_more };
    },
  );

  app.delete(
    '/wallets/sessions/:sessionId',
    {
      config: person,
      schema: { tags, summary: 'End one session', params: SessionParams, response: { 200: Empty } },
    },
    async (req) => {
      await id.sessions.end(authOf(req), req.params.sessionId);
      return {};
    },
  );
}
