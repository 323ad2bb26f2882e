import { useState } from "preact/hooks";

export interface Action {
  busy: boolean;
  error: unknown;
  /** Runs `task`, keeping its failure in `error`; resolves true when it succeeded. */
  run: (task: () => Promise<unknown>) => Promise<boolean>;
  clear: () => void;
}

/** Busy and error state of a form's submit or a row's button. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  return {
    busy,
    error,
    clear: () => setError(undefined),
    async run(task) {
      setBusy(true);
      setError(undefined);
      try {
        await task();
        return true;
      } catch (failure) {
        setError(failure);
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}
