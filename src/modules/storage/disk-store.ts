import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { checkKey, type BlobBody, type BlobStore } from './blob-store.js';

/** The chunk a download reads at a time: all it holds in memory, beside the socket's buffer. */
const READ_CHUNK_BYTES = 64 * 1024;

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

  /**
   * The blob opened, its length from the open descriptor: a blob renamed over meanwhile (same
   * bytes, see put) is still read whole from the file that was opened. The stream closes the
   * descriptor when it ends or is destroyed.
   */
  async open(key: string): Promise<BlobBody | null> {
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      const { size } = await handle.stat();
      return { size, body: handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES }) };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** The blob's length from its directory entry: the file is not opened. */
  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.pathOf(key))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
}
