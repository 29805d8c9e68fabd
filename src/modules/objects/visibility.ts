import type { Executor } from '../../db/pool.js';
import * as repo from './repo.js';

/**
 * objects.is_public follows its template's flag (templates' visibility switch, through the
 * `TemplateObjects` interface templates declare; src/container.ts wires it). With `nowait`,
 * an object another transaction holds fails the statement at once (SQLSTATE 55P03).
 * `switched` runs once a switch has committed: `publicListChanged` empties this process's
 * cache of public list answers, so objects made private leave the list at once
 * (docs/objects.md, "The public list").
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
