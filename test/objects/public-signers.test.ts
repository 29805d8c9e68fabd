import { beforeAll, describe, expect, it } from 'vitest';
import {
  createPasskeySigner,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  signPasskey,
  type EoaSigner,
  type PasskeySigner,
} from '../helpers/ebus.js';
import { useTestService } from '../helpers/harness.js';
import { putTemplate } from '../helpers/objects.js';

/**
 * `GET /public/credentials/{credentialId}` and `GET /public/wallets/{address}/signers/{signer}`
 * publish a signer only when it signed an action on an object that is public now
 * (docs/decisions.md): an action on a private object is published as a salted commitment, so
 * it ties nothing to the wallet, and these reads must not either. The table below is the
 * rule; every row runs for both kinds of signer.
 */
type History = 'none' | 'private only' | 'public' | 'public, template made private since';
const RULE: { history: History; published: boolean }[] = [
  { history: 'none', published: false },
  { history: 'private only', published: false },
  { history: 'public', published: true },
  { history: 'public, template made private since', published: false },
];
const KINDS = ['passkey', 'eoa'] as const;

const svc = useTestService();
let owner: EoaSigner;
beforeAll(async () => {
  owner = await createSigner(svc);
  await fund(svc, owner.orgId, 10n ** 21n);
});

const nonces = new Map<string, number>();
const nextNonce = (walletId: string) => {
  const n = nonces.get(walletId) ?? 0;
  nonces.set(walletId, n + 1);
  return n;
};

async function mint(signer: EoaSigner | PasskeySigner, templateId: string) {
  const a = {
    name: 'mint',
    params: { template_id: templateId },
    nonce: nextNonce(signer.walletId),
  };
  const payload = 'account' in signer ? await signEoa(svc, signer, a) : signPasskey(svc, signer, a);
  const res = await svc.app.inject({
    method: 'POST',
    url: '/ebus/actions',
    headers: signer.headers,
    payload,
  });
  expect(res.statusCode, res.body).toBe(200);
}

/** A signer of `kind` in the owner's organization, with the history the row names. */
async function signerWith(kind: (typeof KINDS)[number], history: History) {
  const signer =
    kind === 'passkey'
      ? await createPasskeySigner(svc, { orgId: owner.orgId, role: 'member' })
      : await createSigner(svc, { orgId: owner.orgId, role: 'member' });
  const privateTemplate = await createTemplate(svc, owner.orgId, { isPublic: false });
  const publicTemplate = await createTemplate(svc, owner.orgId);
  if (history !== 'none') await mint(signer, privateTemplate);
  if (history.startsWith('public')) await mint(signer, publicTemplate);
  if (history === 'public, template made private since')
    await putTemplate(svc, owner.headers, publicTemplate, { is_public: false });
  return signer;
}

function publicRead(signer: EoaSigner | PasskeySigner) {
  const url =
    'authenticator' in signer
      ? `/public/credentials/${signer.authenticator.credentialId}`
      : `/public/wallets/${signer.address}/signers/${signer.address}`;
  return svc.app.inject({ method: 'GET', url });
}

describe('public signer reads publish only signers of public actions', () => {
  for (const kind of KINDS) {
    for (const { history, published } of RULE) {
      it(`${kind}, ${history}: ${published ? 'published' : '404'}`, async () => {
        const signer = await signerWith(kind, history);
        const res = await publicRead(signer);
        if (!published) {
          expect([res.statusCode, res.json<{ code: number }>().code], res.body).toEqual([404, 5]);
          expect(res.body).not.toContain(signer.address);
          return;
        }
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json<{ wallet: string }>().wallet).toBe(signer.address);
      });
    }
  }
});
