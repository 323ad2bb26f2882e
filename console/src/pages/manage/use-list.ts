import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import "./manage.css";
import { type ListPage, type Query, api } from "../../api.ts";

export interface ListState<T> {
  items: T[];
  error: unknown;
  loading: boolean;
  hasMore: boolean;
  loadMore: () => void;
  reload: () => void;
}

/**
 * A control-plane list (core/http/lists.ts) read page by page: the first page when `path` or `query` change
 * (and on reload()), the next one on loadMore() through `next_cursor`. Answers of a superseded load are dropped.
 */
export function useList<T>(path: string | null, query: Query = {}): ListState<T> {
  const [items, setItems] = useState<T[]>([]);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [cursor, setCursor] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const run = useRef(0);
  const queryKey = JSON.stringify(query);

  const load = useCallback(
    async (after: string | null) => {
      if (!path) return;
      const id = ++run.current;
      setLoading(true);
      try {
        const page = await api<ListPage<T>>(path, { query: { ...query, limit: 50, cursor: after ?? undefined } });
        if (id !== run.current) return;
        setItems((previous) => (after ? [...previous, ...page.data] : page.data));
        setCursor(page.has_more ? (page.next_cursor ?? null) : null);
        setError(undefined);
      } catch (failure) {
        if (id === run.current) setError(failure);
      } finally {
        if (id === run.current) setLoading(false);
      }
    },
    [path, queryKey],
  );

  useEffect(() => {
    void load(null);
  }, [load, tick]);

  return {
    items,
    error,
    loading,
    hasMore: cursor !== null,
    loadMore: () => cursor && void load(cursor),
    reload: () => setTick((value) => value + 1),
  };
}
