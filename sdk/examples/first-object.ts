import { createOnsClient } from '@ons/sdk';
import { privateKeyToAccount } from 'viem/accounts';

/**
 * A first object, end to end: an API key with `templates.create` and `actions.create` (nothing
 * more), and a crypto wallet that signs. The crypto wallet must be a member's wallet address
 * or be linked to a member's wallet (console → Sessions → "Link a crypto wallet"): the action
 * is made by that wallet. Organization, wallet and nonce are looked up; the fee is quoted.
 */
export async function firstObject(baseUrl: string, apiKey: string, privateKey: `0x${string}`) {
  const ons = createOnsClient({ baseUrl, apiKey });
  const template = await ons.POST('/templates', {
    body: {
      name: 'Concert ticket',
      faces: [{ id: 'front', url: 'https://example.com/ticket.png', config: {}, content: '' }],
      actions: ['mint', 'transfer', 'redeem'],
      custom_schema: { type: 'object', properties: { seat: { type: 'string' } } },
      is_public: true,
    },
  });
  const fee = await ons.GET('/public/network/fees');
  const signer = privateKeyToAccount(privateKey);
  const { action, object } = await ons.actions.signAndExecute({
    name: 'mint',
    params: { template_id: template.id, custom: { seat: '12A' } },
    signer,
    maxFeeWei: fee.total_fee_wei, // refused rather than charged more than quoted
  });
  return { object, wallet: action.wallet, feeWei: fee.total_fee_wei };
}
