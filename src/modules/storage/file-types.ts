import { fileTypeFromBuffer } from 'file-type';

/**
 * What may be uploaded, detected from the bytes (never from the name or the declared
 * type). Images plus PDF, MP4 and binary glTF. SVG is refused: it can carry script.
 */
export const ALLOWED_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'application/pdf',
  'video/mp4',
  'model/gltf-binary',
]);

/** The detected media type when it is allowed, else null. */
export async function detectAllowedType(bytes: Buffer): Promise<string | null> {
  const detected = await fileTypeFromBuffer(bytes);
  if (!detected || !ALLOWED_TYPES.has(detected.mime)) return null;
  return detected.mime;
}
