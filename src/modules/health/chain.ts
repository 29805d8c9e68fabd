/**
 * Resolves when the chain's JSON-RPC endpoint answers `eth_blockNumber` with a block number;
 * rejects otherwise. The URL may carry a provider's key: it is never put in the error.
 */
export async function pingChain(rpcUrl: string, timeoutMs: number): Promise<void> {
  let answer: unknown;
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    answer = res.ok ? await res.json() : null;
  } catch {
    answer = null;
  }
  const result = (answer as { result?: unknown } | null)?.result;
  if (typeof result !== 'string' || !/^0x[0-9a-f]+$/i.test(result)) {
    throw new Error('the chain did not answer eth_blockNumber');
  }
}
