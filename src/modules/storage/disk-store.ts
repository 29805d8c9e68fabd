import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkKey, type BlobStore } from './blob-store.js';

/** Blobs on the local disk: `<dir>/ab/cd/abcd…` (two fan-out levels keep directories small). */
export class DiskBlobStore implements BlobStore {
  constructor(private readonly dir: string) {}

  private pathOf(key: string): string {
    checkKey(key);
    return path.join(this.dir, key.slice(0, 2), key.slice(2, 4), key);
  }

  /**
   * Writes the bytes to a temporary file and renames it over the blob's name, whether the
   * blob exists or not: blobs are shared by every organization, so skipping the write for
   * bytes stored already would let an upload's answer time tell that some organization holds
   * that file (docs/decisions.md, "An upload's timing does not tell whether its bytes are
   * stored"). The rename replaces identical bytes; a reader sees the old file or the new.
   */
  async put(key: string, bytes: Buffer): Promise<void> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    // Write then rename: a reader never sees a half-written blob.
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, bytes, { mode: 0o640 });
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.pathOf(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
}
