/**
 * An API field's name in words, for the explorer's labels: `integrity_hash` → "Integrity
 * hash", `prev_hash` → "Previous hash", `l2_tx_hash` → "L2 transaction hash",
 * `when_created` → "Created", `total_fee_wei` → "Total fee (wei)", `proof.vkey` → "Proof
 * verification key". The API's name stays the element's title.
 */
const WORDS: Record<string, string> = {
  prev: 'previous',
  tx: 'transaction',
  ipfs: 'IPFS',
  url: 'URL',
  urls: 'URLs',
  l2: 'L2',
  id: 'ID',
  vkey: 'verification key',
};

export function fieldLabel(name: string): string {
  const words = name.split(/[._]/).filter(Boolean);
  if (words[0] === 'when' && words.length > 1) words.shift();
  const unit = words.at(-1) === 'wei' && words.length > 1 ? words.pop() : undefined;
  const text = words.map((w) => WORDS[w] ?? w).join(' ');
  const label = text.charAt(0).toUpperCase() + text.slice(1);
  return unit ? `${label} (${unit})` : label;
}
