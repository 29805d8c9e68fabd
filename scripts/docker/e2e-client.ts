/**
 * The client side of the compose end-to-end run (scripts/docker/e2e.sh), as a person would use
 * the service: over HTTP only, signing with an Ethereum key. State (the key and the ids made)
 * is kept in a JSON file between steps.
 *
 *   tsx scripts/docker/e2e-client.ts signup  BASE_URL STATE   a wallet (EOA sign-in) and an organization
 *   tsx scripts/docker/e2e-client.ts mint    BASE_URL STATE   a public template and one minted object
 *   tsx scripts/docker/e2e-client.ts sealed  BASE_URL STATE   waits until the mint is in a proven batch
 *                                                             that the offline verifier accepts
 *   tsx scripts/docker/e2e-client.ts check   BASE_URL STATE   the object and the batch chain are still there
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { verifyNetwork } from '../../sdk/src/verify/index.js';
import { httpSource } from '../../sdk/src/verify/source.js';
import { buildActionText } from '../../src/modules/ebus/action-text.js';

interface State {
  privateKey: Hex;
  orgId?: string;
  templateId?: string;
  objectId?: string;
  actionId?: string;
  batchId?: string;
  batchHash?: string;
}

const [command, base, stateFile] = process.argv.slice(2);
if (!command || !base || !stateFile) {
  console.error('usage: e2e-client.ts signup|mint|sealed|check BASE_URL STATE_FILE');
  process.exit(2);
}
const load = (): State => JSON.parse(readFileSync(stateFile, 'utf8')) as State;
const save = (s: State) => writeFileSync(stateFile, JSON.stringify(s, null, 2));

async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  token?: string,
  status = 200,
): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Signs in with the state's key (a wallet is made on first sign-in); answers an access token. */
async function signIn(s: State): Promise<string> {
  const account = privateKeyToAccount(s.privateKey);
  const challenge = await api<{ message: string }>(
    'GET',
    `/wallets/connect/eoa/challenge?address=${account.address}`,
  );
  const signature = await account.signMessage({ message: challenge.message });
  const tokens = await api<{ access_token: string }>('POST', '/wallets/connect/eoa', {
    message: challenge.message,
    signature,
  });
  if (!s.orgId) return tokens.access_token;
  const switched = await api<{ access_token: string }>(
    'POST',
    '/organizations/switch',
    { organization_id: s.orgId },
    tokens.access_token,
  );
  return switched.access_token;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  if (command === 'signup') {
    const s: State = { privateKey: generatePrivateKey() };
    const token = await signIn(s);
    const org = await api<{ id: string }>('POST', '/organizations', { name: 'E2E' }, token);
    s.orgId = org.id;
    save(s);
    console.log(org.id);
  } else if (command === 'mint') {
    const s = load();
    const token = await signIn(s);
    const template = await api<{ id: string }>(
      'POST',
      '/templates',
      {
        name: 'E2E ticket',
        faces: [{ id: 'front', url: 'https://example.com/f.png', config: {}, content: '' }],
        actions: ['mint', 'transfer'],
        is_public: true,
      },
      token,
    );
    const network = await api<{ network: string }>('GET', '/public/network');
    const account = privateKeyToAccount(s.privateKey);
    const action = {
      wallet: account.address.toLowerCase(),
      name: 'mint',
      params: { template_id: template.id },
      nonce: 0,
      expires: new Date(Date.now() + 5 * 60_000).toISOString(),
    };
    const text = buildActionText({
      network: network.network,
      organizationId: s.orgId!,
      ...action,
    });
    const signature = await account.signMessage({ message: text });
    const done = await api<{ action: { id: string }; object: { id: string } }>(
      'POST',
      '/ebus/execute',
      { action, signature: { type: 'eoa', signature } },
      token,
    );
    Object.assign(s, {
      templateId: template.id,
      objectId: done.object.id,
      actionId: done.action.id,
    });
    save(s);
    console.log(`minted ${done.object.id} (action ${done.action.id})`);
  } else if (command === 'sealed') {
    const s = load();
    const until = Date.now() + 120_000;
    for (;;) {
      const report = await verifyNetwork(httpSource(base!));
      const proof = report.verdicts.find((v) => v.item.startsWith(`proof ${s.actionId} in `));
      if (report.ok && proof?.ok) {
        const batchId = proof.item.split(' in ')[1]!;
        const batch = await api<{ hash: string; status: string }>('GET', `/batches/${batchId}`);
        Object.assign(s, { batchId, batchHash: batch.hash });
        save(s);
        console.log(`${s.actionId} is in ${batch.status} batch ${batchId} (${batch.hash})`);
        return;
      }
      if (Date.now() > until) {
        throw new Error(`no proven batch holds ${s.actionId}: ${JSON.stringify(report.verdicts)}`);
      }
      await sleep(2000);
    }
  } else if (command === 'check') {
    const s = load();
    const token = await signIn(s);
    const object = await api<{ id: string; template_id: string }>(
      'GET',
      `/objects/${s.objectId}`,
      undefined,
      token,
    );
    if (object.template_id !== s.templateId) throw new Error('the object lost its template');
    const batch = await api<{ hash: string }>('GET', `/batches/${s.batchId}`);
    if (batch.hash !== s.batchHash) throw new Error(`batch hash ${batch.hash} ≠ ${s.batchHash}`);
    const report = await verifyNetwork(httpSource(base!));
    if (!report.ok) throw new Error(`verifier: ${JSON.stringify(report.verdicts)}`);
    console.log(`object ${s.objectId} and batch ${s.batchId} survived; chain verified`);
  } else {
    console.error(`unknown command ${command}`);
    process.exit(2);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
