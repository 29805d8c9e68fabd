/**
 * base64url with or without its `=` padding (RFC 4648 §5 makes padding optional; browsers'
 * `toJSON()` omits it, some client libraries add it). The service compares and looks up
 * credential ids as text, so every base64url it accepts is brought to the unpadded form first.
 */
export function unpadded(value: string): string {
  let end = value.length;
  while (end > 0 && value.charCodeAt(end - 1) === 0x3d /* = */) end -= 1;
  return end === value.length ? value : value.slice(0, end);
}

/** Schema pattern for base64url that may carry up to two `=` of padding at its end. */
export const BASE64URL_MAYBE_PADDED = '^[A-Za-z0-9_-]*={0,2}$';

interface WebauthnCredentialJson {
  id: string;
  rawId: string;
  response: object;
}

/**
 * A WebAuthn credential JSON (registration or authentication) with `id`, `rawId` and every
 * text field of `response` unpadded; other fields (`transports`, `publicKeyAlgorithm`, …)
 * are kept as they are. A copy: the caller's object may be stored as sent.
 */
export function unpadCredential<T extends WebauthnCredentialJson>(credential: T): T {
  const response: Record<string, unknown> = { ...credential.response };
  for (const [key, value] of Object.entries(response)) {
    if (typeof value === 'string') response[key] = unpadded(value);
  }
  return {
    ...credential,
    id: unpadded(credential.id),
    rawId: unpadded(credential.rawId),
    response,
  };
}
