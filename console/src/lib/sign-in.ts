import { isOnsError, type Session } from '@ons/sdk';
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { adoptTokens, ons } from './session.js';
import { utf8Hex, type Eip1193Provider } from './eip1193.js';

/** The four sign-in routes of docs/auth.md, as the console calls them (all through the SDK). */

export async function signInWithPassword(email: string, password: string): Promise<void> {
  adoptTokens(await ons.POST('/auth/login', { body: { email, password } }));
}

export async function signUpWithPassword(input: {
  email: string;
  password: string;
  name?: string;
}): Promise<void> {
  const body = {
    email: input.email,
    password: input.password,
    ...(input.name ? { name: input.name } : {}),
  };
  adoptTokens(await ons.POST('/organizations/wallets', { body }));
}

/** Discoverable-credential sign-in: the browser offers the passkeys it holds for this site. */
export async function signInWithPasskey(): Promise<void> {
  const options = await ons.GET('/wallets/connect/passkey/login/options');
  const credential = await startAuthentication({ optionsJSON: options as never });
  adoptTokens(
    await ons.POST('/wallets/connect/passkey/login/verify', {
      body: { credential: credential as never },
    }),
  );
}

/** An organization id's shape (`org_` and letters or digits): nothing else is one. */
export function isOrganizationId(text: string): boolean {
  return /^org_[0-9A-Za-z]+$/.test(text);
}

/**
 * The organization id in what a person pasted: an id (`org_…`) or a sign-up link
 * (`…/console/sign-up?organization=org_…`); null when it is neither.
 */
export function organizationIdOf(text: string): string | null {
  const t = text.trim();
  if (isOrganizationId(t)) return t;
  try {
    const id = new URL(t).searchParams.get('organization') ?? '';
    return isOrganizationId(id) ? id : null;
  } catch {
    return null;
  }
}

/** The organization a sign-up would join: its name, when it allows self sign-up. */
export function openOrganization(organizationId: string) {
  return ons.GET('/wallets/connect/organizations/{organizationId}', {
    params: { path: { organizationId } },
  });
}

/**
 * A new wallet whose first credential is a passkey (docs/auth.md, "The four ways in"): standalone
 * (as a password sign-up), or joining an organization that allows self sign-up. The caller checks
 * the organization (openOrganization) before this shows the passkey prompt.
 */
export async function signUpWithPasskey(organizationId?: string): Promise<void> {
  const options = await ons.GET('/wallets/connect/passkey/register/options');
  const credential = await startRegistration({ optionsJSON: options as never });
  try {
    adoptTokens(
      await ons.POST('/wallets/connect/passkey/register/verify', {
        body: {
          credential: credential as never,
          ...(organizationId ? { organization_id: organizationId } : {}),
        },
      }),
    );
  } catch (err) {
    // The authenticator kept a passkey the service refused: tell it to forget that one, or
    // it would be offered at the next sign-in and fail (where the browser can).
    if (isOnsError(err) && err.status !== 0) forgetPasskey(options.rp.id, credential.id);
    throw err;
  }
}

function forgetPasskey(rpId: string | undefined, credentialId: string): void {
  const signal = (
    window.PublicKeyCredential as unknown as {
      signalUnknownCredential?: (o: { rpId: string; credentialId: string }) => Promise<void>;
    }
  )?.signalUnknownCredential;
  if (!signal) return;
  signal
    .call(window.PublicKeyCredential, { rpId: rpId ?? window.location.hostname, credentialId })
    .catch(() => undefined);
}

/** Sign-In with Ethereum: the wallet signs the service's EIP-4361 message; creates or returns. */
export async function signInWithWallet(provider: Eip1193Provider): Promise<void> {
  const accounts = await provider.request({ method: 'eth_requestAccounts' });
  const address = Array.isArray(accounts) && typeof accounts[0] === 'string' ? accounts[0] : null;
  if (!address) throw new Error('The wallet did not share an account.');
  const challenge = await ons.GET('/wallets/connect/eoa/challenge', {
    params: { query: { address } },
  });
  const signature = await provider.request({
    method: 'personal_sign',
    params: [utf8Hex(challenge.message), address],
  });
  if (typeof signature !== 'string') throw new Error('The wallet did not return a signature.');
  const tokens: Session = await ons.POST('/wallets/connect/eoa', {
    body: { message: challenge.message, signature },
  });
  adoptTokens(tokens);
}

/** Adds a passkey to the signed-in wallet: it then signs in and signs actions too. */
export async function addPasskey(): Promise<void> {
  const options = await ons.GET('/wallets/me/credentials/passkey/options');
  const credential = await startRegistration({ optionsJSON: options as never });
  await ons.POST('/wallets/me/credentials/passkey', { body: { credential: credential as never } });
}
