/**
 * A module loaded on first use, once per process (a dynamic import kept out of a Lambda's cold start): `get()`
 * starts the load or joins it; `loaded()` is the module once it is there, for synchronous code that runs after
 * an earlier step awaited `get()` (a route's transformResponse after its buildRequest). A failed load is
 * forgotten, so the next call tries again.
 */
export interface LoadOnce<T> {
  get(): Promise<T>;
  loaded(): T | undefined;
}

export function loadOnce<T>(load: () => Promise<T>): LoadOnce<T> {
  let value: T | undefined;
  let pending: Promise<T> | undefined;
  return {
    get() {
      pending ??= load().then(
        (loaded) => (value = loaded),
        (error: unknown) => {
          pending = undefined;
          throw error;
        },
      );
      return pending;
    },
    loaded: () => value,
  };
}
