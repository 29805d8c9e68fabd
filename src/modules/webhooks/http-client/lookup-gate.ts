/**
 * Answers every address a host name resolves to (injectable so tests can lie). `signal`: the
 * caller no longer waits (a resolver may stop early, or ignore it).
 */
export type HostResolver = (hostname: string, signal?: AbortSignal) => Promise<string[]>;

/**
 * Host lookups in flight at once, per process. The system resolver (`getaddrinfo`) runs on
 * one of libuv's four threadpool threads until it answers or gives up, and no timeout of
 * ours can take the thread back: a webhook address whose name servers never answer holds
 * one for as long as the system retries. Unbounded, a few such addresses would take every
 * thread, and with them every file read, every other lookup and the asynchronous crypto of
 * all organizations. Bounded, they take at most these (docs/webhooks.md, "Addresses").
 */
export const LOOKUP_SLOTS = 2;

/** Lookups that may wait for a slot; one more is refused at once. */
export const LOOKUP_QUEUE = 256;

/** A lookup refused because too many wait for a slot already. */
export class LookupsBusy extends Error {
  constructor() {
    super('too many host lookups waiting');
    this.name = 'LookupsBusy';
  }
}

/** The caller stopped waiting (its signal aborted). */
const abandoned = () => new Error('the host lookup is no longer waited for');

interface Waiting {
  start: () => void;
  leave: () => void;
  signal: AbortSignal | undefined;
}

/**
 * `resolve` with at most `slots` lookups running; the rest wait in arrival order, at most
 * `queue` of them. A slot is freed when its lookup settles, not when its caller stops
 * waiting: the thread is held until then. A caller that aborts while waiting leaves the
 * queue and its lookup never starts; one that aborts once its lookup runs is answered with
 * the abort at once, the lookup still holding its slot.
 */
export function gatedResolver(
  resolve: HostResolver,
  slots = LOOKUP_SLOTS,
  queue = LOOKUP_QUEUE,
): HostResolver {
  let running = 0;
  const waiting: Waiting[] = [];
  const next = () => {
    while (running < slots && waiting.length > 0) {
      const w = waiting.shift()!;
      w.signal?.removeEventListener('abort', w.leave);
      w.start();
    }
  };
  return (hostname, signal) =>
    new Promise<string[]>((answer, fail) => {
      if (signal?.aborted) return fail(abandoned());
      const start = () => {
        running++;
        const stop = () => fail(abandoned());
        signal?.addEventListener('abort', stop, { once: true });
        resolve(hostname)
          .then(answer, fail)
          .finally(() => {
            signal?.removeEventListener('abort', stop);
            running--;
            next();
          });
      };
      if (running < slots) return start();
      if (waiting.length >= queue) return fail(new LookupsBusy());
      const w: Waiting = {
        start,
        signal,
        leave: () => {
          const at = waiting.indexOf(w);
          if (at !== -1) waiting.splice(at, 1);
          fail(abandoned());
        },
      };
      signal?.addEventListener('abort', w.leave, { once: true });
      waiting.push(w);
    });
}
