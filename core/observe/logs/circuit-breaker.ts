/**
 * Keeps a failing log store from slowing requests: after `threshold` consecutive failures the circuit opens
 * and writes are skipped (and counted) for `backoffMs`; then one write is tried again. Each call is bounded
 * by `timeoutMs`. Spec 8: LOG_STORE_CONNECTION_FAILURE_THRESHOLD / _BACKOFF_MS / _TIMEOUT_MS.
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  /** Writes skipped or failed since start (exposed for metrics). */
  dropped = 0;
  private readonly threshold: number;
  private readonly backoffMs: number;
  private readonly timeoutMs: number;

  constructor(options: { threshold: number; backoffMs: number; timeoutMs: number }) {
    this.threshold = options.threshold;
    this.backoffMs = options.backoffMs;
    this.timeoutMs = options.timeoutMs;
  }

  get open(): boolean {
    return Date.now() < this.openUntil;
  }

  /**
   * Runs `work` unless the circuit is open; never throws. Resolves to whether it succeeded. `work` is started
   * at once and not referenced after, so what it captured (a request log and its bodies) is not kept alive
   * while the write is awaited.
   */
  run(work: () => Promise<unknown>): Promise<boolean> {
    if (this.open) {
      this.dropped++;
      return Promise.resolve(false);
    }
    let started: Promise<unknown>;
    try {
      started = work();
    } catch (error) {
      started = Promise.reject(error);
    }
    return this.settle(started);
  }

  private async settle(work: Promise<unknown>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        work,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`log store call exceeded ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
      this.failures = 0;
      return true;
    } catch (error) {
      this.dropped++;
      this.failures++;
      if (this.failures >= this.threshold) {
        this.openUntil = Date.now() + this.backoffMs;
        this.failures = 0;
        console.error(`log store failing (${(error as Error).message}); pausing log writes for ${this.backoffMs} ms`);
      }
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}
