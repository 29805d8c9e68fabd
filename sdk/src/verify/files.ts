import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Source } from './source.js';

/** One file per GET: the path and query, URI-encoded, so any answer has its own name. */
const fileOf = (dir: string, path: string): string => join(dir, `${encodeURIComponent(path)}.bin`);
const NOT_FOUND = '.404';

/** Reads answers saved by {@link recordingSource} (node only). */
export function directorySource(dir: string): Source {
  const bytes = async (path: string): Promise<Uint8Array | null> => {
    try {
      return new Uint8Array(await readFile(fileOf(dir, path)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      try {
        await readFile(fileOf(dir, path) + NOT_FOUND);
        return null;
      } catch {
        throw new Error(`${path} was not downloaded into ${dir}`);
      }
    }
  };
  return {
    bytes,
    json: async <T>(path: string) => {
      const b = await bytes(path);
      return b === null ? null : (JSON.parse(new TextDecoder().decode(b)) as T);
    },
  };
}

/** Passes reads on to `inner` and saves each answer (bytes as served) into `dir`. */
export async function recordingSource(inner: Source, dir: string): Promise<Source> {
  await mkdir(dir, { recursive: true });
  const bytes = async (path: string): Promise<Uint8Array | null> => {
    const b = await inner.bytes(path);
    if (b === null) await writeFile(fileOf(dir, path) + NOT_FOUND, '');
    else await writeFile(fileOf(dir, path), b);
    return b;
  };
  return {
    bytes,
    json: async <T>(path: string) => {
      const b = await bytes(path);
      return b === null ? null : (JSON.parse(new TextDecoder().decode(b)) as T);
    },
  };
}
