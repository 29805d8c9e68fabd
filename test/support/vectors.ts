import { fileURLToPath } from 'node:url';

/** The path of a test vector kept in the repository (test/vectors/<name>, see its README). */
export function vectorPath(name: string): string {
  return fileURLToPath(new URL(`../vectors/${name}`, import.meta.url));
}
