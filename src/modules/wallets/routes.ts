import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import {
  CredentialList,
  CredentialParams,
  Empty,
  PublicCredential,
  PublicCredentialParams,
  SignerLinkParams,
  SignerLinks,
  Wallet,
} from './schema.js';
import type { WalletService } from './service.js';

const tags = ['wallets'];
const person = { auth: 'person', permission: 'authenticated' } as const;

/**
 * The signed-in wallet and its credentials. Sign-up, adding a credential and sessions are
 * sign-in's (`auth/wallet-routes.ts`), `/wallets/connect/*` too (`auth/connect-routes.ts`).
 */
export function registerWalletRoutes(app: App, wallets: WalletService) {
  app.get(
    '/wallets/me',
    {
      config: person,
      schema: { tags, summary: 'The signed-in wallet', response: { 200: Wallet } },
    },
    async (req) => wallets.me(authOf(req)),
  );

  app.get(
    '/wallets/me/credentials',
    {
      config: person,
      schema: {
        tags,
        summary: "The signed-in wallet's credentials",
        response: { 200: CredentialList },
      },
    },
    async (req) => ({ credentials: await wallets.credentials(authOf(req)) }),
  );

  app.delete(
    '/wallets/me/credentials/:credentialId',
    {
      config: person,
      schema: {
        tags,
        summary: 'Remove a credential',
        params: CredentialParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await wallets.removeCredential(authOf(req), req.params.credentialId);
      return {};
    },
  );

  app.get(
    '/public/credentials/:credentialId',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: "A passkey's public key, to check the actions it signed (no credential)",
        params: PublicCredentialParams,
        response: { 200: PublicCredential },
      },
    },
    async (req) => wallets.publicCredential(req.params.credentialId),
  );

  app.get(
    '/public/wallets/:address/signers/:signer',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary:
          'When an EOA was linked to a wallet, to check the actions it signed (no credential)',
        params: SignerLinkParams,
        response: { 200: SignerLinks },
      },
    },
    async (req) => wallets.signerLinks(req.params.address, req.params.signer),
  );
}
