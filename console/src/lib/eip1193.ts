/** A browser wallet as the console talks to it (EIP-1193): what sign-in and signing share. */

/** An injected EIP-1193 provider (a browser wallet extension), when the page has one. */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

export function injectedWallet(): Eip1193Provider | null {
  const eth = (window as { ethereum?: unknown }).ethereum;
  return typeof eth === 'object' &&
    eth !== null &&
    typeof (eth as Eip1193Provider).request === 'function'
    ? (eth as Eip1193Provider)
    : null;
}

/** Text as the 0x hex of its UTF-8 bytes (what `personal_sign` takes). */
export function utf8Hex(text: string): string {
  return `0x${Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, '0')).join('')}`;
}
