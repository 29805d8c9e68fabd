import type { OnsClient, PasskeySigner, WebAuthnCredential } from '@ons/sdk';
import { createOnsClient } from '@ons/sdk';
import {
  ACTION_FEE,
  createSigner,
  createTemplate,
  fund,
  type EoaSigner,
  type PasskeySigner as TestPasskeyMember,
} from '../helpers/ebus.js';
import type { LiveService } from './live-service.js';

/** A client signed in as a test member (its session). */
export const sessionClient = (
  live: LiveService,
  m: { accessToken: string; refreshToken: string },
) =>
  createOnsClient({
    baseUrl: live.baseUrl,
    session: { access_token: m.accessToken, refresh_token: m.refreshToken },
  });

/** An owner whose wallet signs with an EOA, in a funded organization with a template. */
export async function funded(
  live: LiveService,
): Promise<{ owner: EoaSigner; templateId: string; ons: OnsClient }> {
  const owner = await createSigner(live.svc, { role: 'owner' });
  await fund(live.svc, owner.orgId, ACTION_FEE * 100n);
  const templateId = await createTemplate(live.svc, owner.orgId);
  return { owner, templateId, ons: sessionClient(live, owner) };
}

/** The SoftAuthenticator the service's passkey tests use, as the SDK's signer interface. */
export function softPasskey(member: TestPasskeyMember): PasskeySigner & { asked: unknown[] } {
  const asked: unknown[] = [];
  return {
    kind: 'passkey',
    asked,
    async getAssertion(request) {
      asked.push(request);
      const { allowCredentials, ...rest } = request;
      return member.authenticator.getAssertion({
        ...rest,
        ...(allowCredentials ? { allowCredentials: allowCredentials.map((id) => ({ id })) } : {}),
      }) as WebAuthnCredential;
    },
  };
}
