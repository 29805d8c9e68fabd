import { useState } from 'preact/hooks';
import { useLoad } from '../lib/hooks.js';

export interface PageOf<T> {
  items: T[];
  next: string;
  has_more: boolean;
}

/** A paged list as a page uses it: the items read so far, and the next page on demand. */
export interface Paged<T> {
  items: T[];
  loading: boolean;
  error: unknown;
  hasMore: boolean;
  more: () => void;
  reload: () => void;
}

/**
 * A cursor-paged list (the service's `{…, next, has_more}`): the first page, then "more"
 * appends the next one. When `deps` change (a filter) it starts again from the first page.
 */
export function usePaged<T>(
  load: (next: string | undefined) => Promise<PageOf<T>>,
  deps: (string | number | boolean | undefined)[],
): Paged<T> {
  const key = JSON.stringify(deps);
  const [pos, setPos] = useState<{ key: string; cursor?: string; earlier: T[] }>({
    key,
    earlier: [],
  });
  // Another filter: the pages read for the previous one no longer count.
  const current = pos.key === key ? pos : { key, cursor: undefined, earlier: [] as T[] };
  const page = useLoad(() => load(current.cursor), [key, current.cursor]);
  // While a page loads, the one before it (another cursor's) is not shown twice.
  const items = page.loading ? current.earlier : [...current.earlier, ...(page.data?.items ?? [])];
  return {
    items,
    loading: page.loading,
    error: page.error,
    hasMore: page.data?.has_more ?? false,
    more: () => {
      if (!page.data?.has_more) return;
      setPos({ key, cursor: page.data.next, earlier: items });
    },
    reload: () => {
      if (current.cursor === undefined) page.reload();
      setPos({ key, earlier: [] });
    },
  };
}
