import { forbidden } from '../../lib/errors.js';
import type { AuthContext, Permission } from '../../lib/permissions.js';

/**
 * What a delivery carries: the action log record and the object record, private objects'
 * data included (docs/webhooks.md, "What is sent").
 */
export const DELIVERY_READS: readonly Permission[] = ['actions.read', 'objects.read'];

/**
 * A webhook is a standing read of the organization's actions and objects, sent to an
 * address its manager picks. So whatever makes one send — creating it, changing its address
 * or rules, switching it on, redelivering, replaying — also needs the reads a delivery
 * carries: a key holding only `webhooks.*` must not read through a webhook what it cannot
 * read through the API (docs/decisions.md, "A webhook needs the reads it sends").
 */
export function requireDeliveryReads(auth: AuthContext): void {
  for (const perm of DELIVERY_READS) {
    if (!auth.permissions.has(perm)) {
      throw forbidden(
        `missing permission ${perm}: a webhook sends the organization's actions and objects`,
      );
    }
  }
}
