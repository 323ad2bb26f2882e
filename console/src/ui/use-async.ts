import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `deps` change (and on reload()), keeping the last data while reloading; answers of a
 * superseded run are dropped so a slow early request never overwrites a newer one.
 */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): AsyncState<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const run = useRef(0);
  useEffect(() => {
    const id = ++run.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => id === run.current && setState({ data, error: undefined, loading: false }),
      (error) => id === run.current && setState((previous) => ({ ...previous, error, loading: false })),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((value) => value + 1), []);
  return { ...state, reload };
}
