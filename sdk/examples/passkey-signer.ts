import { browserPasskey, type OnsClient, type StartAuthentication } from '@ons/sdk';

/**
 * In a browser: the passkey signs the action's WebAuthn challenge through
 * `@simplewebauthn/browser` (install it beside the SDK). Outside a browser, pass another
 * `startAuthentication` (the tests pass a software authenticator).
 */
export async function redeemWithPasskey(
  ons: OnsClient,
  objectId: string,
  startAuthentication?: StartAuthentication,
) {
  const signer = browserPasskey({
    rpId: 'localhost', // the service's WEBAUTHN_RP_ID
    ...(startAuthentication ? { startAuthentication } : {}),
  });
  return ons.actions.signAndExecute({ name: 'redeem', params: { object_id: objectId }, signer });
}
