/**
 * Standard base64 (RFC 4648 §4, with padding) as the signed-note and checkpoint formats use
 * it. Decoding is strict: a string that does not re-encode to itself (wrong padding, stray
 * bits in the last character, whitespace) is refused, so one value has one spelling.
 */

const STD = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** The bytes of canonical standard base64, or null. */
export function fromBase64(s: string): Uint8Array | null {
  if (!STD.test(s)) return null;
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return toBase64(out) === s ? out : null;
}
