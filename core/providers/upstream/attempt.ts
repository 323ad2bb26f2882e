/**
 * Cancellation of one upstream attempt: aborted when the client goes away, when the attempt's timer fires, or
 * by the caller (a stalled stream, a client that cancelled the answer). One AbortController linked by a
 * listener: AbortSignal.any costs tens of microseconds per call and keeps weak references alive for the GC,
 * which showed on the hot path.
 */
export class AttemptAbort {
  readonly #controller = new AbortController();
  readonly #client: AbortSignal;
  readonly #onClientAbort = () => this.#controller.abort(this.#client.reason);
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** True when the attempt's own timer ended it (a 408, not a client abort). */
  timedOut = false;

  constructor(client: AbortSignal, timeoutMs: number) {
    this.#client = client;
    if (client.aborted) this.#controller.abort(client.reason);
    else client.addEventListener("abort", this.#onClientAbort, { once: true });
    this.#timer = setTimeout(() => {
      this.timedOut = true;
      this.#controller.abort();
    }, timeoutMs);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True when the client went away (rather than the timer or the caller ending the attempt). */
  get clientGone(): boolean {
    return this.#client.aborted;
  }

  /** Stops the whole-attempt timer (a stream switches to an idle timeout once it has started). */
  clearTimer(): void {
    clearTimeout(this.#timer);
  }

  abort(): void {
    this.#controller.abort();
  }

  /** The attempt is over: no timer, no listener left on the client's signal. */
  release(): void {
    clearTimeout(this.#timer);
    this.#client.removeEventListener("abort", this.#onClientAbort);
  }
}
