import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * The service's stored secrets (the access-token key, webhook keys, the batch, salt and log
 * keys) sealed at rest under SECRETS_KEY when it is set (docs/decisions.md, "Stored secrets
 * sealed under SECRETS_KEY"), as the idempotency answers are sealed (src/modules/idempotency/
 * sealing.ts): AES-256-GCM, a fresh 96-bit nonce per value, under a key derived (HKDF) from
 * the setting. The value's column and row are its associated data, so a sealed value copied
 * into another row or column does not open.
 *
 * A sealed value is the text `sealed:v1:<key id>:<base64url(nonce ‖ ciphertext ‖ tag)>`, the
 * key id being the first 4 bytes of the key's SHA-256 in hex (`openssl rand -hex 32` makes a
 * key; `echo -n KEY | xxd -r -p | sha256sum | cut -c1-8` names it). Text and jsonb columns
 * hold that text (jsonb as a JSON string), bytea columns its ASCII bytes. A value that does
 * not begin with `sealed:` is a clear one, taken as it is: what the service stored before
 * the setting, or with it unset.
 */
export const SEALED_MARK = 'sealed:';
const V1 = 'sealed:v1:';
const MARK_HEX = Buffer.from(SEALED_MARK, 'latin1').toString('hex');
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Where a stored value lives: `table.column` and its row's id. */
export interface SecretPlace {
  column: string;
  row: string;
  /**
   * Another place whose values this one also opens: a webhook's previous key copied there
   * from its current key by a release before this one (which copied the stored value as it
   * is, binding and all).
   */
  alsoAs?: { column: string; row: string };
}

/** What config.ts reads of SECRETS_KEY and SECRETS_KEY_PREVIOUS. */
export interface SecretsKeys {
  key: Buffer | null;
  previous: readonly Buffer[];
}

/** A sealed value that cannot be opened with the keys given: the operator's to fix. */
export class SealedSecretError extends Error {}

/** A key's id: the first 4 bytes of its SHA-256, hex. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** Whether a stored value is sealed (any version), as text or bytes. */
export function isSealed(value: string | Buffer): boolean {
  return typeof value === 'string'
    ? value.startsWith(SEALED_MARK)
    : value.length >= SEALED_MARK.length &&
        value.toString('latin1', 0, SEALED_MARK.length) === SEALED_MARK;
}

interface Key {
  id: string;
  aes: Buffer;
  setting: 'SECRETS_KEY' | 'SECRETS_KEY_PREVIOUS';
}

/** The clear bytes of a sealed value's body under `key` bound to `at`; null when it does not open. */
function openBody(key: Key, body: Buffer, at: { column: string; row: string }): Buffer | null {
  if (body.length < NONCE_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.aes, body.subarray(0, NONCE_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(aad(at));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(body.subarray(NONCE_BYTES, body.length - TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    return null;
  }
}

const where = (at: SecretPlace) => `${at.column} (row ${at.row})`;
const aad = (at: { column: string; row: string }) =>
  Buffer.from(`ons sealed secret\0${at.column}\0${at.row}`, 'utf8');

/**
 * Opened bytes values remembered at most (webhook keys: five per organization at most); past
 * it, the one opened first is forgotten.
 */
export const OPENED_CACHE = 10_000;

/**
 * Seals and opens stored secrets under SECRETS_KEY; opens with SECRETS_KEY_PREVIOUS too.
 * Without SECRETS_KEY it seals nothing (values are stored as they are) and refuses every
 * sealed value, naming the setting: a sealed secret is never taken as absent.
 */
export class SecretSealer {
  private readonly current: Key | null;
  private readonly keys = new Map<string, Key>();
  /** Opened bytes values by their stored form (hex): a webhook key opened once per process. */
  private readonly opened = new Map<string, { column: string; row: string; plain: Buffer }>();

  constructor(keys: SecretsKeys) {
    const all = [
      ...(keys.key ? [{ key: keys.key, setting: 'SECRETS_KEY' as const }] : []),
      ...keys.previous.map((key) => ({ key, setting: 'SECRETS_KEY_PREVIOUS' as const })),
    ];
    for (const { key, setting } of all) {
      if (key.length !== 32) throw new Error(`${setting} must be 32 bytes`);
      const id = keyId(key);
      const aes = Buffer.from(hkdfSync('sha256', key, '', 'ons sealed secret v1', 32));
      const known = this.keys.get(id);
      if (known && !known.aes.equals(aes)) {
        throw new SealedSecretError(
          `two keys of SECRETS_KEY and SECRETS_KEY_PREVIOUS share the key id ${id}: drop one`,
        );
      }
      if (!known) this.keys.set(id, { id, aes, setting });
    }
    this.current = keys.key ? this.keys.get(keyId(keys.key))! : null;
  }

  /** One with no key: stores values as they are, refuses sealed ones. */
  static none(): SecretSealer {
    return new SecretSealer({ key: null, previous: [] });
  }

  /** Whether new values are sealed (SECRETS_KEY is set). */
  get sealing(): boolean {
    return this.current !== null;
  }

  /** How many opened values this process holds (`ons_webhook_keys_opened` on /metrics). */
  get openedCount(): number {
    return this.opened.size;
  }

  /** What a value sealed under SECRETS_KEY begins with; null when it is unset. */
  get prefix(): string | null {
    return this.current ? `${V1}${this.current.id}:` : null;
  }

  /** The text to store for `plain`: sealed under SECRETS_KEY, or `plain` itself when unset. */
  sealText(plain: string, at: SecretPlace): string {
    return this.current ? this.seal(Buffer.from(plain, 'utf8'), at) : plain;
  }

  /** The clear text of a stored value (a clear one as it is). Throws when it does not open. */
  openText(stored: string, at: SecretPlace): string {
    return isSealed(stored) ? this.open(stored, at).toString('utf8') : stored;
  }

  /** The bytes to store for `plain` (a bytea column). */
  sealBytes(plain: Buffer, at: SecretPlace): Buffer {
    return this.current ? Buffer.from(this.seal(plain, at), 'latin1') : plain;
  }

  /** The clear bytes of a stored bytea value (a clear one as it is). */
  openBytes(stored: Buffer, at: SecretPlace): Buffer {
    return isSealed(stored) ? this.open(stored.toString('latin1'), at) : stored;
  }

  /** What to store in a jsonb column for `value`: a sealed JSON string, or `value` when unset. */
  sealJson<T>(value: T, at: SecretPlace): T | string {
    return this.current ? this.seal(Buffer.from(JSON.stringify(value), 'utf8'), at) : value;
  }

  /** A jsonb column's value as stored (a sealed string, or the clear value) opened. */
  openJson<T>(stored: T | string, at: SecretPlace): T {
    return typeof stored === 'string' && isSealed(stored)
      ? (JSON.parse(this.open(stored, at).toString('utf8')) as T)
      : (stored as T);
  }

  /**
   * A bytea key given as hex (the event bus's group statement answers webhook keys so),
   * opened once and then remembered by its stored form, so each later use costs one lookup.
   * A value remembered for another place is opened again (and so refused): the binding holds.
   * The answer is shared: never change its bytes.
   */
  openKeyHex(hex: string, at: SecretPlace): Buffer {
    if (!hex.startsWith(MARK_HEX)) return Buffer.from(hex, 'hex');
    const hit = this.opened.get(hex);
    if (hit !== undefined && hit.column === at.column && hit.row === at.row) return hit.plain;
    const plain = this.open(Buffer.from(hex, 'hex').toString('latin1'), at);
    if (this.opened.size >= OPENED_CACHE) {
      this.opened.delete(this.opened.keys().next().value!);
    }
    this.opened.set(hex, { column: at.column, row: at.row, plain });
    return plain;
  }

  /**
   * Forgets the values opened for these places (a webhook's keys once rotated or deleted, in
   * this process or, through its notice, in another), so that keys no longer stored do not
   * stay in memory until the cap pushes them out. Runs over the memory once, however many
   * places: for rare changes (or many at once), not for each use.
   */
  forget(places: readonly SecretPlace[]): void {
    if (places.length === 0) return;
    const gone = new Set(places.map((p) => `${p.column}\0${p.row}`));
    for (const [hex, v] of this.opened) {
      if (gone.has(`${v.column}\0${v.row}`)) this.opened.delete(hex);
    }
  }

  /** Forgets every value opened (such notices may have been missed): each opens again once. */
  forgetAll(): void {
    this.opened.clear();
  }

  /** A bytea key as read from its column, through the same memory as {@link openKeyHex}. */
  openKey(stored: Buffer, at: SecretPlace): Buffer {
    return isSealed(stored) ? this.openKeyHex(stored.toString('hex'), at) : stored;
  }

  /**
   * What to store instead of `stored` at start (src/db/sealed-columns.ts): a clear value
   * sealed, or one sealed under a previous key sealed again under SECRETS_KEY; null when
   * there is nothing to change (sealed under SECRETS_KEY already, or clear with it unset).
   * Throws (SealedSecretError) for a sealed value no key given opens, whatever its key.
   */
  reseal<T extends string | Buffer>(stored: T, at: SecretPlace): T | null {
    const value: string | Buffer = stored;
    const text = typeof value === 'string' ? value : value.toString('latin1');
    const prefix = this.prefix;
    // Sealed under SECRETS_KEY already: nothing to write, but it must open (a value changed or
    // copied from elsewhere stops the start now, not a delivery or a sign-in later).
    if (prefix !== null && text.startsWith(prefix)) {
      this.open(text, at);
      return null;
    }
    const sealed = isSealed(text);
    if (!sealed && !this.current) return null;
    // A sealed value must open (the error names the setting), even when nothing is written.
    const plain = sealed
      ? this.open(text, at)
      : typeof value === 'string'
        ? Buffer.from(value, 'utf8')
        : value;
    if (!this.current) return null;
    const out = this.seal(plain, at);
    return (typeof value === 'string' ? out : Buffer.from(out, 'latin1')) as T;
  }

  private seal(plain: Buffer, at: SecretPlace): string {
    const key = this.current!;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.aes, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(at));
    const body = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return `${V1}${key.id}:${body.toString('base64url')}`;
  }

  private open(stored: string, at: SecretPlace): Buffer {
    const match = /^sealed:v1:([0-9a-f]{8}):([A-Za-z0-9_-]+)$/.exec(stored);
    if (!match) {
      throw new SealedSecretError(
        `${where(at)} is marked sealed but is not in the form sealed:v1:<key id>:<data> this release reads`,
      );
    }
    const [, id, data] = match as unknown as [string, string, string];
    const key = this.keys.get(id);
    if (!key) throw new SealedSecretError(this.unknownKey(at, id));
    const body = Buffer.from(data, 'base64url');
    const opened = openBody(key, body, at) ?? (at.alsoAs ? openBody(key, body, at.alsoAs) : null);
    if (opened === null) {
      throw new SealedSecretError(
        `${where(at)} does not open under ${key.setting} (key id ${id}): the value was changed, or copied from another row or column`,
      );
    }
    return opened;
  }

  private unknownKey(at: SecretPlace, id: string): string {
    const sealedUnder = `${where(at)} is sealed under the key with id ${id}`;
    if (!this.current) {
      return (
        `${sealedUnder}, and SECRETS_KEY is not set: set SECRETS_KEY to that key ` +
        '(a sealed secret is never taken as missing, nor replaced by a new one)'
      );
    }
    const previous = [...this.keys.values()].filter((k) => k !== this.current).map((k) => k.id);
    return (
      `${sealedUnder}, which is neither SECRETS_KEY (key id ${this.current.id}) nor in ` +
      `SECRETS_KEY_PREVIOUS (${previous.length > 0 ? `key ids ${previous.join(', ')}` : 'unset'}): ` +
      'set SECRETS_KEY to that key, or add it to SECRETS_KEY_PREVIOUS'
    );
  }
}
