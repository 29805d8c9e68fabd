import type { Readable } from 'node:stream';
import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, Code, invalid, notFound } from '../../lib/errors.js';
import { sha256 } from '../../lib/hash.js';
import { newId } from '../../lib/ids.js';
import { cutText } from '../../lib/input-check.js';
import {
  requireOrg,
  requirePermission,
  type AuthContext,
  type Permission,
} from '../../lib/permissions.js';
import type { ImageRecord } from '../objects/index.js';
import type { BlobStore } from './blob-store.js';
import { ALLOWED_TYPES, detectAllowedType } from './file-types.js';
import { addUsage, findFile, insertFile, usedBytes, type FileRow } from './repo.js';

export interface Upload {
  filename: string;
  bytes: Buffer;
  isPublic: boolean;
}

/** What a download's headers say of a file: its record's fields and its stored length. */
export interface FileHead {
  type: string;
  name: string;
  isPublic: boolean;
  size: number;
}

/** A file opened for download: its head, and its bytes as a stream. */
export interface StoredFile extends FileHead {
  /** Must be sent or destroyed: it holds a file descriptor (disk) or a connection (S3). */
  body: Readable;
}

const MAX_NAME_LENGTH = 255;

/**
 * What a credential needs to download a private file of its organization. The route itself
 * is open (public files are for anyone), so the service checks it; docs/permissions.md is
 * generated with this rule.
 */
export const PRIVATE_FILE_PERMISSION: Permission = 'storage.read';

/** A file name fit to show and to put in a header: no paths, no control characters. */
export function cleanName(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\u0000-\u001f\u007f"]/g, '').trim();
  return cutText(clean, MAX_NAME_LENGTH) || 'file';
}

/** Uploaded files: bytes in a BlobStore under their SHA-256, records in `files`. */
export class StorageService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly store: BlobStore,
    private readonly publicUrl: string,
    /** What one organization's files may take in all (STORAGE_QUOTA_BYTES). */
    private readonly quotaBytes: number = Number.MAX_SAFE_INTEGER,
  ) {}

  urlOf(id: string): string {
    return `${this.publicUrl}/storage/files/${id}`;
  }

  toRecord(row: FileRow): ImageRecord {
    return {
      id: row.id,
      name: row.name,
      type: row.type,
      url: this.urlOf(row.id),
      hash: row.hash,
      is_public: row.is_public,
      when_created: row.created_at.toISOString(),
    };
  }

  /** Stores an upload of an allowed type (detected from its bytes) for the caller's organization. */
  async upload(auth: AuthContext, up: Upload): Promise<ImageRecord> {
    requirePermission(auth, 'storage.create');
    const orgId = requireOrg(auth);
    if (up.bytes.length === 0)
      throw invalid('the file is empty', [{ field: 'file', reason: 'is empty' }]);
    const type = await detectAllowedType(up.bytes);
    if (!type) {
      throw invalid(`file type not allowed; allowed: ${[...ALLOWED_TYPES].join(', ')}`, [
        { field: 'file', reason: 'type not allowed' },
      ]);
    }
    // Checked before the bytes are stored, so a full organization writes nothing to the disk
    // the database shares; counted with the record, so concurrent uploads cannot pass it.
    const size = up.bytes.length;
    if ((await usedBytes(this.db, orgId)) + size > this.quotaBytes) throw this.overQuota();
    const digest = sha256(up.bytes).toString('hex');
    await this.store.put(digest, up.bytes, type);
    const row: FileRow = {
      id: newId('file'),
      organization_id: orgId,
      wallet_id: auth.walletId,
      name: cleanName(up.filename),
      type,
      size_bytes: size,
      hash: `0x${digest}`,
      is_public: up.isPublic,
      created_at: this.clock.now(),
    };
    await this.db.transaction(async (tx) => {
      if (!(await addUsage(tx, orgId, size, this.quotaBytes))) throw this.overQuota();
      await insertFile(tx, row);
    });
    return this.toRecord(row);
  }

  private overQuota(): AppError {
    return new AppError(
      Code.RESOURCE_EXHAUSTED,
      `the organization's files may take at most ${this.quotaBytes} bytes (STORAGE_QUOTA_BYTES)`,
      { quota_bytes: this.quotaBytes },
    );
  }

  /**
   * A file opened for reading: a public file for anyone, a private one only for a credential of its
   * organization holding PRIVATE_FILE_PERMISSION (403 code 7 to one without it). Anyone
   * outside the organization gets 404, so a private file's existence is not revealed.
   */
  async read(auth: AuthContext | null, id: string): Promise<StoredFile> {
    const row = await this.readable(auth, id);
    // A record whose bytes are gone answers as a missing file, before anything is sent.
    const blob = await this.store.open(row.hash.slice(2));
    if (!blob) throw notFound('file');
    try {
      return { ...headOf(row, blob.size), body: blob.body };
    } catch (err) {
      blob.body.destroy();
      throw err;
    }
  }

  /**
   * What `read` would answer but the bytes (for `HEAD`): the same rules, the same errors, the
   * length from the store without opening the file.
   */
  async head(auth: AuthContext | null, id: string): Promise<FileHead> {
    const row = await this.readable(auth, id);
    const size = await this.store.size(row.hash.slice(2));
    if (size === null) throw notFound('file');
    return headOf(row, size);
  }

  /** The file's record, if `auth` may read it (see `read`). */
  private async readable(auth: AuthContext | null, id: string): Promise<FileRow> {
    const row = await findFile(this.db, id);
    if (!row) throw notFound('file');
    if (!row.is_public) {
      if (!auth || auth.orgId !== row.organization_id) throw notFound('file');
      requirePermission(auth, PRIVATE_FILE_PERMISSION);
    }
    return row;
  }
}

/**
 * The head of a file whose stored bytes are `size` long. Bytes of another length than were
 * uploaded cannot be these; the bytes are not hashed again on the way out (docs/objects.md,
 * "Files").
 */
function headOf(row: FileRow, size: number): FileHead {
  if (size !== row.size_bytes) {
    throw new Error(`stored bytes of ${row.id} are ${size} long, not ${row.size_bytes}`);
  }
  return { type: row.type, name: row.name, isPublic: row.is_public, size };
}
