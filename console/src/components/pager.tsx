import { useState } from 'preact/hooks';
import { useLoad } from '../lib/hooks.js';

export interface PageOf<T> {
  items: T[];
  next: string;
  has_more: boolean;
}

/**
 * A cursor-paged list (the service's `{…, next, has_more}`): the first page, then "more"
 * appends the next one. `deps` restart it from the first page.
 */
export function usePaged<T>(
  load: (next: string | undefined) => Promise<PageOf<T>>,
  deps: unknown[],
) {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [earlier, setEarlier] = useState<T[]>([]);
  const page = useLoad(() => load(cursor), [...deps, cursor]);
  const items = [...earlier, ...(page.data?.items ?? [])];
  return {
    items,
    loading: page.loading,
    error: page.error,
    hasMore: page.data?.has_more ?? false,
    more: () => {
      if (!page.data?.has_more) return;
      setEarlier(items);
      setCursor(page.data.next);
    },
    reload: () => {
      setEarlier([]);
      if (cursor === undefined) page.reload();
      else setCursor(undefined);
    },
  };
}
