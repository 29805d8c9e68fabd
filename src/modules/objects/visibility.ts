import type { Executor } from '../../db/pool.js';
import * as repo from './repo.js';

/**
 * The channel on which a change that takes something out of the public list is announced:
 * migration 0043's triggers send on it from the transaction that makes a template private or
 * deletes a public template or object, so PostgreSQL delivers the notice when, and only if,
 * that transaction commits. Every API process empties its cache of public list answers on it
 * (src/notices.ts), whatever the payload.
 */
export const PUBLIC_LIST_CHANNEL = 'ons_public_list';

/**
 * objects.is_public follows its template's flag (templates' visibility switch, through the
 * `TemplateObjects` interface templates declare; src/container.ts wires it). With `nowait`,
 * an object another transaction holds fails the statement at once (SQLSTATE 55P03).
 * `switched` runs once a switch has committed: `publicListChanged` empties this process's
 * cache of public list answers, so objects made private leave the list at once
 * (docs/objects.md, "The public list"); the other processes empty theirs when the switch's
 * notice arrives (`PUBLIC_LIST_CHANNEL`).
 */
export function objectVisibility(publicListChanged: () => void) {
  return {
    setPublic: (
      exec: Executor,
      orgId: string,
      templateId: string,
      isPublic: boolean,
      opts: { nowait?: boolean } = {},
    ): Promise<void> => repo.setObjectsPublic(exec, orgId, templateId, isPublic, opts),
    switched: (): void => publicListChanged(),
  };
}
