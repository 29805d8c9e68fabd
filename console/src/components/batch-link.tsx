import type { ComponentChildren } from 'preact';
import { pathOf, paths } from '../paths.js';

/** A link to the batch that sealed an action, or "not sealed yet". */
export function BatchLink({
  batchId,
  children,
}: {
  batchId: string | null | undefined;
  children: ComponentChildren;
}) {
  return batchId ? (
    <a href={pathOf(paths.explorerBatch, batchId)}>{children}</a>
  ) : (
    <>not sealed yet</>
  );
}
