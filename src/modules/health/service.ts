import type { Db } from '../../db/pool.js';
import { pingDatabase } from './repo.js';

/** A readiness probe answers within this even when the database does not (ms). */
const READY_WITHIN_MS = 2000;

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('readiness check timed out')), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Resolves when the database answers within READY_WITHIN_MS; rejects with why not. */
export async function checkReady(db: Db): Promise<void> {
  await within(READY_WITHIN_MS, pingDatabase(db));
}
