import type { Logger } from 'pino';
import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import * as repo from './repo/batches.js';
import { hiddenOf, isPublished, publishView, sameIds } from './views.js';

/** How long a process holds a noted switch while it goes through its batches. */
const LEASE_MS = 60_000;
/** Batches of the template looked at per pass (each: one statement when nothing changed). */
const BATCHES_PER_PASS = 64;
/** Contents published anew per pass (each is built from the batch's action rows). */
const PUBLISHED_PER_PASS = 4;
/** How long a switch waits for a header being computed before it looks again. */
const HEADER_WAIT_MS = 1_000;

/**
 * Notes a template's visibility switch in the switch's own transaction (templates call it,
 * src/container.ts wires it), so that the sealer brings the batches holding its objects'
 * actions up to date however the process that switched it ends.
 */
export const batchVisibility = {
  switching: (tx: Executor, templateId: string, now: Date): Promise<void> =>
    repo.noteVisibilitySwitch(tx, templateId, now),
};

/**
 * The sealer's step that follows templates' visibility switches (docs/batches.md, "An object
 * made private later"): for each noted switch, oldest first, each sealed batch holding an
 * action on one of the template's objects gets its content published anew when it does not
 * show those of them private now as private (or shows as private those public again), a few
 * per pass, in chain order. The explorer does the same for a batch it is asked about, so this
 * only bounds how long an item of `GET /batches`, which lists a batch's first actions only,
 * names the former `ipfs_url`.
 */
export class VisibilitySweep {
  constructor(
    private readonly deps: { db: Db; clock: Clock; logger: Logger; saltKey: Uint8Array },
  ) {}

  /** One pass over the oldest due switch; answers how many batches it looked at. */
  async pass(): Promise<number> {
    const { db, clock, logger, saltKey } = this.deps;
    const noted = await repo.claimVisibilitySwitch(db, clock.now(), LEASE_MS);
    if (noted === null) return 0;
    const batches = await repo.batchesOfTemplate(
      db,
      noted.template_id,
      noted.after_sequence,
      BATCHES_PER_PASS,
    );
    let after = noted.after_sequence;
    let published = 0;
    let waitForHeader = false;
    for (const b of batches) {
      if (b.unsealed) {
        // Its header may have read the visibility before the switch: look again once written.
        waitForHeader = true;
        break;
      }
      const found = await repo.findBatchWithPrivateNow(db, b.id);
      if (found !== null && isPublished(found.row)) {
        const hidden = hiddenOf(found.row, found.privateNow);
        if (!sameIds(hidden, found.row.hidden_actions)) {
          const view = await publishView(db, found.row, hidden, saltKey, clock.now());
          if (view === null) {
            logger.error({ batch: b.id }, 'a batch content no longer matches its ipfs_url');
          } else if (view.saved) {
            logger.info(
              { batch: b.id, ipfs_url: view.ipfsUrl, hidden: hidden.length },
              "a batch's content re-published: its objects' visibility changed",
            );
          }
          published++;
        }
      }
      after = b.sequence;
      if (published >= PUBLISHED_PER_PASS) break;
    }
    const reachedEnd = !waitForHeader && after === (batches.at(-1)?.sequence ?? after);
    if (reachedEnd && batches.length < BATCHES_PER_PASS) {
      await repo.finishVisibilitySwitch(db, noted);
    } else {
      const nextAt = waitForHeader ? new Date(clock.now().getTime() + HEADER_WAIT_MS) : null;
      await repo.progressVisibilitySwitch(db, noted, after, nextAt);
    }
    return waitForHeader && after === noted.after_sequence ? 0 : Math.max(1, batches.length);
  }
}
