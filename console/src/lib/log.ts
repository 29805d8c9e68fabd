import {
  OnsError,
  verifyCheckpoint,
  verifyReceipt,
  type CheckedCheckpoint,
  type Receipt,
  type ReceiptResult,
} from '@ons/sdk';
import { ons } from './session.js';

/**
 * The transparency log in the explorer (issue 33 item 7): the latest signed checkpoint and
 * its witnesses, and "verify receipt" for one action, checked here with the SDK's
 * verifyCheckpoint / verifyReceipt (WebCrypto only). What is trusted is the log's key and the
 * witnesses' keys as `GET /public/network` names them.
 */

export interface LogInfo {
  network: string;
  origin: string;
  verifier_key: string;
  witnesses: { name: string; verifier_key: string; url?: string }[];
}

async function get(path: string): Promise<Response> {
  const res = await fetch(`${ons.baseUrl}${path}`);
  if (!res.ok) {
    let body: unknown = null;
    try {
      body = await res.json();
    } catch {
      // not JSON: the status says enough
    }
    throw OnsError.fromAnswer(res, body);
  }
  return res;
}

/** `/public/network`'s `log`, or null when the service keeps no log. */
export async function loadLogInfo(): Promise<LogInfo | null> {
  const n = (await (await get('/public/network')).json()) as {
    network: string;
    log?: Omit<LogInfo, 'network'>;
  };
  return n.log ? { network: n.network, ...n.log } : null;
}

export interface LatestCheckpoint {
  info: LogInfo;
  text: string;
  checked: CheckedCheckpoint;
}

/** The latest checkpoint, verified against the log's and the witnesses' keys. */
export async function loadCheckpoint(): Promise<LatestCheckpoint | null> {
  const info = await loadLogInfo();
  if (!info) return null;
  const text = await (await get('/log/checkpoint')).text();
  const checked = await verifyCheckpoint(text, {
    logKey: info.verifier_key,
    witnessKeys: info.witnesses.map((w) => w.verifier_key),
  });
  return { info, text, checked };
}

/**
 * Fetches an action's receipt and checks it offline. `asMember`: asked with the signed-in
 * session, so an action of the organization's private objects has one too (with its
 * commitment's opening); without it, only a public object's actions do.
 */
export async function checkReceipt(
  actionId: string,
  asMember = false,
): Promise<{ receipt: Receipt; result: ReceiptResult }> {
  const info = await loadLogInfo();
  if (!info) throw new Error('This service keeps no transparency log.');
  const receipt = asMember
    ? ((await ons.GET('/ebus/action-logs/{id}/receipt', {
        params: { path: { id: actionId } },
      })) as Receipt)
    : ((await (
        await get(`/ebus/action-logs/${encodeURIComponent(actionId)}/receipt`)
      ).json()) as Receipt);
  const result = await verifyReceipt(receipt, {
    logKey: info.verifier_key,
    witnessKeys: info.witnesses.map((w) => w.verifier_key),
    network: info.network,
  });
  return { receipt, result };
}
