import type { SignatureBody, WebAuthnCredential } from '../types.js';
import { webauthnChallenge } from './text.js';

/**
 * An Ethereum account that signs EIP-191 `personal_sign` messages: a viem `LocalAccount`
 * (`privateKeyToAccount`, `mnemonicToAccount`, …) is one as it is.
 */
export interface EoaAccount {
  readonly address: string;
  signMessage(args: { message: string }): Promise<string>;
}

/** What a passkey is asked to sign: the options of `navigator.credentials.get()`. */
export interface PasskeyRequest {
  /** base64url(SHA-256(action text)). */
  challenge: string;
  /** The service's WebAuthn RP id (its `WEBAUTHN_RP_ID`, `localhost` by default). */
  rpId?: string;
  /** Credential ids (base64url) the passkey may be one of; empty or absent: any. */
  allowCredentials?: string[];
  /** The service requires user verification for actions. */
  userVerification: 'required';
  timeout?: number;
}

/** Signs actions with a passkey: the browser's, a platform authenticator, a test one. */
export interface PasskeySigner {
  readonly kind: 'passkey';
  getAssertion(request: PasskeyRequest): Promise<WebAuthnCredential>;
}

/** Who signs an action: an EOA or a passkey. */
export type ActionSigner = EoaAccount | PasskeySigner;

export function isPasskeySigner(signer: ActionSigner): signer is PasskeySigner {
  return (signer as Partial<PasskeySigner>).kind === 'passkey';
}

/** The `startAuthentication` of `@simplewebauthn/browser` (its shape, without its types). */
export type StartAuthentication = (args: {
  optionsJSON: {
    challenge: string;
    rpId?: string;
    allowCredentials?: { id: string; type: 'public-key' }[];
    userVerification?: 'required' | 'preferred' | 'discouraged';
    timeout?: number;
  };
}) => Promise<object>;

export interface BrowserPasskeyOptions {
  /** The service's RP id; default: the page's host, as the browser decides. */
  rpId?: string;
  /** base64url ids of the wallet's passkeys, to skip the browser's chooser. */
  credentialIds?: string[];
  timeoutMs?: number;
  /** Default: `startAuthentication` of `@simplewebauthn/browser`, loaded on first use. */
  startAuthentication?: StartAuthentication;
}

/**
 * A passkey signer for browsers through `@simplewebauthn/browser` (an optional peer
 * dependency: install it in the app that uses this).
 */
export function browserPasskey(options: BrowserPasskeyOptions = {}): PasskeySigner {
  return {
    kind: 'passkey',
    async getAssertion(request) {
      const start =
        options.startAuthentication ??
        (await import('@simplewebauthn/browser')).startAuthentication;
      const ids = request.allowCredentials ?? options.credentialIds ?? [];
      const timeout = request.timeout ?? options.timeoutMs;
      const rpId = request.rpId ?? options.rpId;
      const credential = await start({
        optionsJSON: {
          challenge: request.challenge,
          ...(rpId !== undefined ? { rpId } : {}),
          ...(ids.length > 0
            ? { allowCredentials: ids.map((id) => ({ id, type: 'public-key' as const })) }
            : {}),
          userVerification: request.userVerification,
          ...(timeout !== undefined ? { timeout } : {}),
        },
      });
      return credential as WebAuthnCredential;
    },
  };
}

/** Signs an action's text: EIP-191 for an EOA, a WebAuthn assertion for a passkey. */
export async function signActionText(
  signer: ActionSigner,
  text: string,
  passkey: Omit<PasskeyRequest, 'challenge' | 'userVerification'> = {},
): Promise<SignatureBody> {
  if (isPasskeySigner(signer)) {
    const challenge = await webauthnChallenge(text);
    const credential = await signer.getAssertion({
      ...passkey,
      challenge,
      userVerification: 'required',
    });
    return { type: 'webauthn', credential };
  }
  return { type: 'eoa', signature: await signer.signMessage({ message: text }) };
}
