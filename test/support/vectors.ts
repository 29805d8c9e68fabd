import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The path of a shared test vector (shared/vectors/<name>), which sits beside the
 * checkout: /work/shared for /work/main, one level further up from a worktree (/work/wt/x).
 */
export function sharedVectorPath(name: string): string {
  for (const up of ['../../../', '../../../../']) {
    const path = fileURLToPath(new URL(`${up}shared/vectors/${name}`, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error(`shared/vectors/${name} not found above the checkout`);
}
