import type { OnsClient } from '@ons/sdk';
import { privateKeyToAccount } from 'viem/accounts';

/**
 * Mints an object: the text to sign is built here (byte for byte what POST /ebus/prepare
 * answers), signed by the wallet's EOA, and executed. The nonce and wallet are looked up.
 */
export async function mint(ons: OnsClient, privateKey: `0x${string}`, templateId: string) {
  const signer = privateKeyToAccount(privateKey);
  const signed = await ons.actions.sign({
    name: 'mint',
    params: { template_id: templateId, custom: { seat: '12A' } },
    signer,
  });
  const { action, object } = await ons.actions.execute(signed);
  // Several at once: consecutive nonces, one POST /ebus/actions/batch, answered per item.
  const results = await ons.actions.executeMany(
    [
      { name: 'update', params: { object_id: object.id, custom: { seat: '14C' } } },
      { name: 'redeem', params: { object_id: object.id } },
    ],
    { signer },
  );
  return { action, object, statuses: results.map((r) => r.status) };
}
