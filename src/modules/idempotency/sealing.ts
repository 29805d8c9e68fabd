import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { KeyId } from './repo.js';

/**
 * Kept answers can hold secrets (a new API key, a webhook's signing secret), and the service
 * keeps no secret readable at rest. So a key is stored only as its SHA-256, and the answer is
 * sealed (AES-256-GCM) with a key derived from the client's Idempotency-Key, its scope and
 * route: only a request that sends the key again can open it; a reader of the database
 * cannot.
 */
export function storedId(id: KeyId): KeyId {
  return { ...id, key: createHash('sha256').update(id.key).digest('hex') };
}

function sealingKey(id: KeyId): Buffer {
  return Buffer.from(
    hkdfSync('sha256', id.key, `${id.scope}\n${id.route}`, 'ons idempotency answer', 32),
  );
}

export function seal(id: KeyId, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(id), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), body]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64')))
    .join('.');
}

/** The answer sealed for this key; null when it does not open (not sealed for this key). */
export function open(id: KeyId, sealed: string): string | null {
  const [v, iv, tag, body] = sealed.split('.');
  if (v !== 'v1' || iv === undefined || tag === undefined || body === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(id), Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return null;
  }
}
