import { httpSource, verifyNetwork } from '@ons/sdk';
import { main as onsVerify } from '@ons/sdk/cli';

/**
 * Re-checks the network's public history without trusting the service: every action's
 * signature (the public objects' histories, and every batch's content), each public object's
 * integrity chain, each of its actions' inclusion proof and every sealed batch (content,
 * roots, chain, Ed25519 attestation).
 */
export async function verifyHistory(baseUrl: string, savedDir: string) {
  const report = await verifyNetwork(httpSource(baseUrl));
  const failed = report.verdicts.filter((v) => !v.ok); // each names what failed: v.failed
  // The same from the command line: `npx ons-verify download <url> <dir>`, then, offline,
  // `npx ons-verify check <dir>` (or `check <url>`); exit status 1 when anything failed.
  const lines: string[] = [];
  const out = { log: (line: string) => lines.push(line), isTTY: false };
  const downloaded = await onsVerify(['download', baseUrl, savedDir], out);
  const offline = await onsVerify(['check', savedDir], out);
  return { ok: report.ok, failed, exitCodes: [downloaded, offline], summary: lines.at(-1) };
}
