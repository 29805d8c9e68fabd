import { Gauge, type Registry } from 'prom-client';
import type { GroupCommitter } from './group-commit.js';

/**
 * The group committer's running totals on /metrics. Rates come from the deltas: actions per
 * group = Δactions / Δgroups; mean queue wait = Δwait / Δactions; mean group time =
 * Δapply / Δgroups. The queue now: actions waiting for a group and groups in flight (a
 * queue that keeps growing means the database, not the process, is the limit).
 */
export function registerEbusMetrics(
  registry: Registry,
  stats: GroupCommitter['stats'],
  depth: () => GroupCommitter['depth'],
): void {
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge('ons_ebus_groups', 'Action groups applied since start', () => stats.groups);
  gauge('ons_ebus_group_actions', 'Actions in the groups applied since start', () => stats.actions);
  gauge(
    'ons_ebus_group_wait_seconds',
    'Summed time actions waited for their group to start',
    () => stats.waitMs / 1000,
  );
  gauge(
    'ons_ebus_group_apply_seconds',
    'Summed time groups took to apply',
    () => stats.applyMs / 1000,
  );
  gauge(
    'ons_ebus_groups_stalled',
    'Groups that outlasted EBUS_GROUP_STALL_MS and let others start beside them, since start',
    () => stats.stalled,
  );
  gauge(
    'ons_ebus_group_queue_actions',
    'Verified actions waiting for a group in this process now',
    () => depth().queued,
  );
  gauge(
    'ons_ebus_groups_in_flight',
    'Groups being applied in this process now',
    () => depth().running,
  );
}
