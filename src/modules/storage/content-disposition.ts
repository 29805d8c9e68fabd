/**
 * A download's `Content-Disposition` (RFC 6266): `filename*` carries the name exactly, as
 * UTF-8 percent-encoded (RFC 8187); `filename` is the fallback for a client that reads only
 * that: printable ASCII, with `"` and `\` escaped, and every other character (non-ASCII,
 * control, and `%`, which some clients decode) replaced by `_`.
 */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|%/gu, '_').replace(/["\\]/g, '\\$&');
  // encodeURIComponent leaves ' ( ) * as they are; RFC 8187 allows none of them unencoded.
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `inline; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
