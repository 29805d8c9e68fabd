/**
 * Answers every address a host name resolves to (injectable so tests can lie). `signal`: the
 * caller no longer waits (a resolver may stop early, or ignore it).
 */
export type HostResolver = (hostname: string, signal?: AbortSignal) => Promise<string[]>;

/**
 * Host lookups of deliveries in flight at once, per process. Each is a pair of DNS queries
 * that holds no thread and ends within a few seconds (dns-resolver.ts), so a name whose name
 * servers never answer holds one of these for that long, and many such names delay the others
 * only once they take every slot. A name holds at most one slot, however many callers want it
 * (see gatedResolver), and an organization's deliveries name at most its five webhooks' hosts.
 * Saving a webhook never takes one of these: saves have a gate of their own
 * (SAVE_LOOKUP_SLOTS), so callers' saves cannot make a delivery wait.
 */
export const LOOKUP_SLOTS = 128;

/** Lookups (of distinct names) that may wait for a slot; one more is refused at once. */
export const LOOKUP_QUEUE = 256;

/**
 * Host lookups of webhook saves (`POST /webhooks`, a `PUT` of `url`) in flight at once, and
 * waiting, per process: a gate apart from the deliveries' (docs/webhooks.md, "Addresses").
 * A save whose name never answers holds its slot up to 5 s; beyond the queue a save is
 * answered 503 (address-policy.ts). Names that hang can so delay or refuse other saves, never
 * a delivery.
 */
export const SAVE_LOOKUP_SLOTS = 16;
export const SAVE_LOOKUP_QUEUE = 32;

/** A lookup refused because too many wait for a slot already. */
export class LookupsBusy extends Error {
  constructor() {
    super('too many host lookups waiting');
    this.name = 'LookupsBusy';
  }
}

/**
 * The caller stopped waiting (its signal aborted). `started`: its lookup was running then;
 * if not, it had only waited for a slot, so nothing is known of the name.
 */
export class LookupAbandoned extends Error {
  constructor(readonly started: boolean) {
    super('the host lookup is no longer waited for');
    this.name = 'LookupAbandoned';
  }
}

/**
 * A gated resolver, which also tells whether a lookup of a name waits for a slot now, and
 * tells a caller (`started`) when the lookup it waits for leaves the queue and runs: what came
 * before was this process's queue, not the name's name servers.
 */
export interface GatedResolver extends HostResolver {
  (hostname: string, signal?: AbortSignal, started?: () => void): Promise<string[]>;
  /** True while a lookup of `hostname` waits for a slot: it has not started. */
  waitsForSlot(hostname: string): boolean;
}

/** Whether `resolve` is gated (gatedResolver), so it tells its callers when lookups start. */
export function isGated(resolve: HostResolver): resolve is GatedResolver {
  return typeof (resolve as Partial<GatedResolver>).waitsForSlot === 'function';
}

interface Caller {
  answer: (addresses: string[]) => void;
  fail: (err: unknown) => void;
  signal: AbortSignal | undefined;
  leave: () => void;
  started: (() => void) | undefined;
}

/** One lookup of one name, waiting for a slot or running, and everyone waiting for it. */
interface Lookup {
  hostname: string;
  started: boolean;
  callers: Set<Caller>;
  /** Aborted when its last caller stops waiting: the resolver may stop early. */
  stop: AbortController;
}

/**
 * `resolve` with at most `slots` lookups running; the rest wait in arrival order, at most
 * `queue` of them. A request for a name whose lookup is waiting or running joins that lookup
 * and is answered with it: a name never holds more than one slot, nor more than one place in
 * the queue, however many connections want it at once. A slot is freed when its lookup
 * settles, not when its callers stop waiting. A caller that aborts stops waiting itself,
 * answered with the abort at once; a lookup still waiting whose callers have all gone leaves
 * the queue and never starts, while one that runs is told to stop (the signal `resolve` is
 * given) and holds its slot until it settles. A caller's `started` is called when the lookup it
 * waits for starts, at once if it runs already.
 */
export function gatedResolver(
  resolve: HostResolver,
  slots = LOOKUP_SLOTS,
  queue = LOOKUP_QUEUE,
): GatedResolver {
  let running = 0;
  const waiting: Lookup[] = [];
  const byName = new Map<string, Lookup>();

  const settle = (lookup: Lookup, end: (c: Caller) => void) => {
    if (byName.get(lookup.hostname) === lookup) byName.delete(lookup.hostname);
    for (const c of lookup.callers) {
      c.signal?.removeEventListener('abort', c.leave);
      end(c);
    }
    lookup.callers.clear();
  };
  const start = (lookup: Lookup) => {
    lookup.started = true;
    running++;
    for (const c of lookup.callers) c.started?.();
    // The name's lookup runs once; its callers share the answer (or the failure).
    resolve(lookup.hostname, lookup.stop.signal)
      .then(
        (addresses) => settle(lookup, (c) => c.answer(addresses)),
        (err: unknown) => settle(lookup, (c) => c.fail(err)),
      )
      .finally(() => {
        running--;
        next();
      });
  };
  const next = () => {
    while (running < slots && waiting.length > 0) start(waiting.shift()!);
  };

  const gated = (hostname: string, signal?: AbortSignal, started?: () => void) =>
    new Promise<string[]>((answer, fail) => {
      if (signal?.aborted) return fail(new LookupAbandoned(false));
      const found = byName.get(hostname);
      if (!found && running >= slots && waiting.length >= queue) return fail(new LookupsBusy());
      const joined = found ?? {
        hostname,
        started: false,
        callers: new Set<Caller>(),
        stop: new AbortController(),
      };
      const c: Caller = {
        answer,
        fail,
        signal,
        started,
        leave: () => {
          joined.callers.delete(c);
          fail(new LookupAbandoned(joined.started));
          // Nobody waits for it any more: a running lookup is told to stop (its slot is free
          // once it settles), one that has not started never starts.
          if (joined.started && joined.callers.size === 0) joined.stop.abort();
          if (!joined.started && joined.callers.size === 0) {
            const at = waiting.indexOf(joined);
            if (at !== -1) waiting.splice(at, 1);
            if (byName.get(hostname) === joined) byName.delete(hostname);
          }
        },
      };
      signal?.addEventListener('abort', c.leave, { once: true });
      joined.callers.add(c);
      // Joined a lookup already running: nothing to wait for.
      if (joined.started) c.started?.();
      if (found) return;
      byName.set(hostname, joined);
      if (running < slots) start(joined);
      else waiting.push(joined);
    });
  return Object.assign(gated, {
    waitsForSlot: (hostname: string) => byName.get(hostname)?.started === false,
  });
}
