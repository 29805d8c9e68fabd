import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Loads data for a page when it mounts (and when `deps` change); `reload()` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error: unknown; loading: boolean }>({
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const n = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => n === latest.current && setState({ data, error: null, loading: false }),
      (error: unknown) => n === latest.current && setState({ error, loading: false }),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface Action<A extends unknown[], R> {
  run: (...args: A) => Promise<R | undefined>;
  busy: boolean;
  error: unknown;
  /** What the last run did, said to the person (when `notice` was given), until the next run. */
  notice: string | null;
  clear: () => void;
}

/**
 * A button's or form's work: `busy` while it runs, `error` when it failed (shown by the page),
 * and `notice` once it succeeded, from `notice(...args)`.
 */
export function useAction<A extends unknown[], R>(
  fn: (...args: A) => Promise<R>,
  notice?: (...args: A) => string,
): Action<A, R> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState<string | null>(null);
  const run = async (...args: A): Promise<R | undefined> => {
    setBusy(true);
    setError(null);
    setSaid(null);
    try {
      const result = await fn(...args);
      if (notice) setSaid(notice(...args));
      return result;
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, notice: said, clear: () => setError(null) };
}
