import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { AuthenticationResponseJSON, WebAuthnCredential } from '@simplewebauthn/server';
import { describe, expect, it } from 'vitest';
import {
  coseToKeyObject,
  verifyWebauthnAssertion,
} from '../../src/lib/crypto/webauthn-assertion.js';
import { SoftAuthenticator } from './soft-authenticator.js';
import type { SoftAlgorithm, SoftOverrides } from './soft-authenticator.js';

const ORIGIN = 'http://localhost:8080';
const RP_ID = 'localhost';

async function register(algorithm: SoftAlgorithm = -7) {
  const auth = new SoftAuthenticator({ origin: ORIGIN, rpId: RP_ID, algorithm });
  const options = await generateRegistrationOptions({
    rpName: 'ONS',
    rpID: RP_ID,
    userName: 'alice@example.com',
    attestationType: 'none',
    authenticatorSelection: { userVerification: 'required', residentKey: 'required' },
  });
  const response = auth.createCredential(options);
  const verification = await verifyRegistrationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: RP_ID,
    requireUserVerification: true,
  });
  return { auth, options, response, verification };
}

function storedCredential(auth: SoftAuthenticator, counter: number): WebAuthnCredential {
  return { id: auth.credentialId, publicKey: auth.publicKeyCose, counter };
}

async function verifyWithLibrary(
  auth: SoftAuthenticator,
  response: AuthenticationResponseJSON,
  challenge: string,
  counter: number,
): Promise<boolean> {
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: ORIGIN,
      expectedRPID: RP_ID,
      credential: storedCredential(auth, counter),
      requireUserVerification: true,
    });
    return result.verified;
  } catch {
    return false;
  }
}

function verifyWithOurs(
  auth: SoftAuthenticator,
  response: AuthenticationResponseJSON,
  challenge: string,
  counter: number,
) {
  return verifyWebauthnAssertion({
    credential: response,
    expectedChallenge: challenge,
    expectedOrigins: [ORIGIN],
    expectedRpId: RP_ID,
    publicKey: coseToKeyObject(auth.publicKeyCose),
    signCount: counter,
  });
}

describe('SoftAuthenticator registration', () => {
  it.each([
    ['ES256', -7],
    ['EdDSA', -8],
    ['RS256', -257],
  ] as const)(
    'produces a %s registration that verifyRegistrationResponse accepts with UV required',
    async (_name, alg) => {
      const { auth, response, verification } = await register(alg);
      expect(verification.verified).toBe(true);
      const info = verification.registrationInfo!;
      expect(info.fmt).toBe('none');
      expect(info.userVerified).toBe(true);
      expect(info.origin).toBe(ORIGIN);
      expect(info.rpID).toBe(RP_ID);
      expect(info.credential.id).toBe(auth.credentialId);
      expect(info.credential.counter).toBe(0);
      expect(Buffer.from(info.credential.publicKey).equals(auth.publicKeyCose)).toBe(true);
      expect(response).toMatchObject({
        id: auth.credentialId,
        rawId: auth.credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      });
    },
  );

  it.each([
    ['a wrong origin', { origin: 'https://evil.example' }],
    ['a wrong RP id', { rpId: 'evil.example' }],
    ['no UV flag', { flags: 0x41 }],
  ] as [string, SoftOverrides][])(
    'produces a registration with %s that is refused',
    async (_n, o) => {
      const auth = new SoftAuthenticator();
      const options = await generateRegistrationOptions({
        rpName: 'ONS',
        rpID: RP_ID,
        userName: 'bob@example.com',
        attestationType: 'none',
      });
      await expect(
        verifyRegistrationResponse({
          response: auth.createCredential(options, o),
          expectedChallenge: options.challenge,
          expectedOrigin: ORIGIN,
          expectedRPID: RP_ID,
          requireUserVerification: true,
        }),
      ).rejects.toThrow();
    },
  );

  it('refuses to create a credential for an RP that does not accept its algorithm', () => {
    const auth = new SoftAuthenticator({ algorithm: -8 });
    expect(() =>
      auth.createCredential({
        challenge: 'c',
        rp: { id: RP_ID },
        user: { id: 'dQ' },
        pubKeyCredParams: [{ alg: -7, type: 'public-key' }],
      }),
    ).toThrow(/algorithm/);
  });
});

describe('SoftAuthenticator assertions', () => {
  it.each([
    ['ES256', -7],
    ['EdDSA', -8],
    ['RS256', -257],
  ] as const)(
    'produces a %s assertion accepted by verifyAuthenticationResponse and by our verifier',
    async (_name, alg) => {
      const { auth, options: regOptions } = await register(alg);
      const options = await generateAuthenticationOptions({
        rpID: RP_ID,
        allowCredentials: [{ id: auth.credentialId }],
        userVerification: 'required',
      });
      const response = auth.getAssertion(options);
      expect(response.response.userHandle).toBe(regOptions.user.id);

      const library = await verifyAuthenticationResponse({
        response,
        expectedChallenge: options.challenge,
        expectedOrigin: ORIGIN,
        expectedRPID: RP_ID,
        credential: storedCredential(auth, 0),
        requireUserVerification: true,
      });
      expect(library.verified).toBe(true);
      expect(library.authenticationInfo.newCounter).toBe(1);
      expect(verifyWithOurs(auth, response, options.challenge, 0)).toEqual({
        ok: true,
        newSignCount: 1,
      });
    },
  );

  it('advances its counter on every assertion, so the next one verifies against the last', async () => {
    const { auth } = await register();
    for (let counter = 0; counter < 3; counter++) {
      const response = auth.getAssertion({ challenge: 'Y2hhbGxlbmdl' });
      expect(await verifyWithLibrary(auth, response, 'Y2hhbGxlbmdl', counter)).toBe(true);
      expect(verifyWithOurs(auth, response, 'Y2hhbGxlbmdl', counter)).toEqual({
        ok: true,
        newSignCount: counter + 1,
      });
    }
    expect(auth.signCount).toBe(3);
  });

  it.each([
    ['a wrong origin', { origin: 'https://evil.example' }],
    ['a wrong RP id', { rpId: 'evil.example' }],
    ['no UV flag', { flags: 0x01 }],
    ['a replayed counter', { signCount: 2 }],
  ] as [string, SoftOverrides][])(
    'produces an assertion with %s that both verifiers refuse',
    async (_name, overrides) => {
      const { auth } = await register();
      const challenge = 'dGhlIGFjdGlvbiBoYXNo';
      // Two earlier sign-ins: the relying party has stored counter 2.
      auth.getAssertion({ challenge });
      auth.getAssertion({ challenge });
      const stored = 2;
      const response = auth.getAssertion({ challenge }, overrides);
      expect(await verifyWithLibrary(auth, response, challenge, stored)).toBe(false);
      expect(verifyWithOurs(auth, response, challenge, stored).ok).toBe(false);

      // The same authenticator, without the fault, passes both.
      const good = auth.getAssertion({ challenge });
      expect(await verifyWithLibrary(auth, good, challenge, stored)).toBe(true);
      expect(verifyWithOurs(auth, good, challenge, stored).ok).toBe(true);
    },
  );

  it('reports another credential id when asked, and only signs for credentials it holds', async () => {
    const { auth } = await register();
    const response = auth.getAssertion({ challenge: 'AA' }, { credentialId: 'b3RoZXI' });
    expect(response.id).toBe('b3RoZXI');
    expect(response.rawId).toBe('b3RoZXI');
    expect(() =>
      auth.getAssertion({ challenge: 'AA', allowCredentials: [{ id: 'dW5rbm93bg' }] }),
    ).toThrow(/allowCredentials/);
    expect(() => new SoftAuthenticator().getAssertion({ challenge: 'AA' })).toThrow(
      /no credential/,
    );
  });
});
