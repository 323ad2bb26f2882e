import { timeoutError } from "./failures.ts";

/** Iterates a source, failing with a timeout when no item arrives for `idleMs` (a stalled upstream stream). */
export async function* withIdleTimeout<T>(
  source: AsyncIterable<T>,
  idleMs: number,
  onTimeout: () => void,
): AsyncIterable<T> {
  const iterator = source[Symbol.asyncIterator]();
  // One timer for the whole stream, re-armed per item (no promise or timer per chunk). It only counts time
  // spent waiting for the source, not time the consumer (a slow client) takes.
  let waiting = false;
  let timedOut = false;
  const timer = setTimeout(function expire() {
    if (!waiting) return void timer.refresh();
    timedOut = true;
    onTimeout();
  }, idleMs);
  try {
    for (;;) {
      timer.refresh();
      waiting = true;
      let result: IteratorResult<T>;
      try {
        result = await iterator.next();
      } catch (error) {
        if (timedOut) throw timeoutError(idleMs);
        throw error;
      } finally {
        waiting = false;
      }
      if (timedOut) throw timeoutError(idleMs);
      if (result.done) return;
      yield result.value;
    }
  } finally {
    clearTimeout(timer);
    await iterator.return?.();
  }
}
