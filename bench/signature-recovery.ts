/**
 * Micro-benchmark: EIP-191 signer recovery for action texts.
 *
 *   npx tsx bench/signature-recovery.ts [count]
 *
 * Signs `count` (default 2,000) distinct action texts with viem (untimed), then times the
 * native recoverEip191Address over all of them and viem's recoverMessageAddress over 300.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { recoverMessageAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { recoverEip191Address } from '../src/lib/crypto/eip191.js';
import { buildActionText } from '../src/modules/ebus/action-text.js';

export interface SignedText {
  text: string;
  signature: Hex;
  address: string;
}

export interface RecoveryRate {
  count: number;
  seconds: number;
  perSecond: number;
}

/** `count` distinct action texts signed by a few viem accounts (not timed). */
export async function signActionTexts(count: number): Promise<SignedText[]> {
  const accounts = Array.from({ length: 8 }, () => privateKeyToAccount(generatePrivateKey()));
  const signed: SignedText[] = [];
  for (let i = 0; i < count; i++) {
    const account = accounts[i % accounts.length]!;
    const text = buildActionText({
      network: 'ons-bench',
      organizationId: 'org_01JDBENCH0000000000000000',
      wallet: account.address,
      nonce: i,
      name: 'transfer',
      params: { object_id: `obj_${i.toString().padStart(26, '0')}`, to: account.address },
      expires: new Date(Date.UTC(2030, 0, 1) + i * 1000),
    });
    signed.push({
      text,
      signature: await account.signMessage({ message: text }),
      address: account.address.toLowerCase(),
    });
  }
  return signed;
}

function rate(count: number, ms: number): RecoveryRate {
  return { count, seconds: ms / 1000, perSecond: Math.round((count * 1000) / ms) };
}

/** Times recoverEip191Address over pre-signed texts; throws if any recovery is wrong. */
export function timeNativeRecovery(signed: readonly SignedText[]): RecoveryRate {
  const start = performance.now();
  let wrong = 0;
  for (const { text, signature, address } of signed) {
    const result = recoverEip191Address(text, signature);
    if (!result.ok || result.address !== address) wrong++;
  }
  const ms = performance.now() - start;
  if (wrong > 0) throw new Error(`${wrong} of ${signed.length} recoveries were wrong`);
  return rate(signed.length, ms);
}

/** Times viem's recoverMessageAddress over pre-signed texts; throws if any is wrong. */
export async function timeViemRecovery(signed: readonly SignedText[]): Promise<RecoveryRate> {
  const start = performance.now();
  let wrong = 0;
  for (const { text, signature, address } of signed) {
    const recovered = await recoverMessageAddress({ message: text, signature });
    if (recovered.toLowerCase() !== address) wrong++;
  }
  const ms = performance.now() - start;
  if (wrong > 0) throw new Error(`${wrong} of ${signed.length} viem recoveries were wrong`);
  return rate(signed.length, ms);
}

/** Signs `count` action texts (untimed) and measures native recoveries per second. */
export async function measureRecoveryRate(count: number): Promise<RecoveryRate> {
  const signed = await signActionTexts(count);
  timeNativeRecovery(signed.slice(0, Math.min(200, signed.length))); // warm-up
  return timeNativeRecovery(signed);
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 2000);
  const viemCount = Math.min(300, count);
  const signStart = performance.now();
  const signed = await signActionTexts(count);
  const signMs = performance.now() - signStart;
  console.log(
    `signed ${count} action texts with viem in ${(signMs / 1000).toFixed(2)} s (untimed)`,
  );

  timeNativeRecovery(signed.slice(0, Math.min(200, count))); // warm-up
  const native = timeNativeRecovery(signed);
  await timeViemRecovery(signed.slice(0, Math.min(20, viemCount))); // warm-up
  const viem = await timeViemRecovery(signed.slice(0, viemCount));

  console.log(
    `native secp256k1 recoverEip191Address: ${native.perSecond.toLocaleString('en')} recoveries/s ` +
      `(${native.count} in ${native.seconds.toFixed(3)} s)`,
  );
  console.log(
    `viem recoverMessageAddress:            ${viem.perSecond.toLocaleString('en')} recoveries/s ` +
      `(${viem.count} in ${viem.seconds.toFixed(3)} s)`,
  );
  console.log(`speed-up: ${(native.perSecond / viem.perSecond).toFixed(1)}x`);
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
