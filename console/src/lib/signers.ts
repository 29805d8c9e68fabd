import { browserPasskey, type ActionSigner, type StartAuthentication } from '@ons/sdk';
import { startAuthentication } from '@simplewebauthn/browser';
import { utf8Hex, type Eip1193Provider } from './eip1193.js';

/**
 * The signed-in person's passkey as the SDK's action signer: the SDK builds the action text
 * here, the browser's WebAuthn prompt signs its hash (docs/ebus.md, "The text to sign").
 */
export const passkeySigner: ActionSigner = browserPasskey({
  startAuthentication: startAuthentication as unknown as StartAuthentication,
});

/**
 * An injected EIP-1193 provider's account as the SDK's EOA signer (`personal_sign` of the
 * action text). It must be the wallet's own address or a crypto wallet linked to it.
 */
export async function walletSigner(provider: Eip1193Provider): Promise<ActionSigner> {
  const accounts = await provider.request({ method: 'eth_requestAccounts' });
  const address = Array.isArray(accounts) && typeof accounts[0] === 'string' ? accounts[0] : null;
  if (!address) throw new Error('The wallet did not share an account.');
  return {
    address,
    async signMessage({ message }) {
      const signature = await provider.request({
        method: 'personal_sign',
        params: [utf8Hex(message), address],
      });
      if (typeof signature !== 'string') throw new Error('The wallet did not return a signature.');
      return signature;
    },
  };
}
