import { useLoad } from '../lib/hooks.js';
import { useClaims } from '../lib/session.js';
import { ons } from '../lib/session.js';
import { paths } from '../paths.js';

/**
 * A banner on every page while the organization's balance is below the threshold it set
 * (docs/policies.md, "Low balance"), with how many actions it still pays for. Nothing for a
 * caller who may not read the balance, or when it is not low.
 */
export function LowBalanceBanner() {
  const claims = useClaims();
  const organizationId = claims?.organizationId ?? null;
  const balance = useLoad(
    () =>
      organizationId
        ? ons
            .GET('/organizations/{organizationId}/balance', {
              params: { path: { organizationId } },
            })
            .catch(() => null)
        : Promise.resolve(null),
    [organizationId],
  );
  const b = balance.data;
  if (!b || !b.low) return null;
  return (
    <div class="banner warning" role="status" data-testid="low-balance">
      The balance is {b.balance} {b.token}, below the {formatWei(b.low_balance_wei)} you set: it
      pays for {b.actions_left} more actions at today’s price. <a href={paths.balance}>Add funds</a>
    </div>
  );
}

function formatWei(wei: string | null): string {
  return wei === null ? 'threshold' : `threshold of ${wei} wei`;
}
