/**
 * Holds new requests while the storage thread is far behind with the request logs, so it catches up instead of
 * the logs being dropped. The thread runs at a lower priority (storage-worker.ts): on a saturated machine (every
 * core busy with the event loop, its clients and its upstreams) it gets too little CPU to write a log per request,
 * its backlog reached WorkerRecords' bound within a second, writes failed, and the logger's circuit breaker then
 * skipped every log for a minute (LOG_STORE_CONNECTION_BACKOFF_MS): measured, half the benchmark's requests went
 * unlogged. Held here, new requests wait (in-flight ones go on) while the event loop idles and the thread gets
 * the core: throughput follows what the machine can do with a log per request.
 *
 * A gate closes once the backlog reaches `high` and opens when it is down to `low`. A thread that does not catch
 * up within `maxHoldMs` (stuck on its disk, not starved) must not slow requests: the gate then stays open until
 * the backlog has drained to `low`, and the logger's breaker deals with the failing writes as before.
 */
export interface LogBacklog {
  /** Writes the thread has not answered yet. */
  readonly backlog: number;
  /** Called each time the thread answered writes (the backlog fell). */
  onSettled(listener: () => void): void;
}

export interface LogBacklogLimits {
  high: number;
  low: number;
  maxHoldMs: number;
}

/** About 0.2 s and 0.05 s of a busy gateway's logs, under WorkerRecords' bound of 2,048 waiting writes. */
export const DEFAULT_LOG_BACKLOG_LIMITS: LogBacklogLimits = { high: 1024, low: 256, maxHoldMs: 500 };

export class LogBacklogGate {
  readonly #logs: LogBacklog;
  readonly #limits: LogBacklogLimits;
  /** Resolves the requests held, when the gate opens; undefined while it is open. */
  #held: { promise: Promise<void>; open: () => void } | undefined;
  /** Set when a hold ran out: no holding until the backlog is back down to `low`. */
  #gaveUp = false;
  /** Requests held since start (for the benchmark and tests). */
  heldRequests = 0;

  constructor(logs: LogBacklog, limits: LogBacklogLimits = DEFAULT_LOG_BACKLOG_LIMITS) {
    this.#logs = logs;
    this.#limits = limits;
    logs.onSettled(() => this.#settled());
  }

  /** Undefined when a request may go on now (no promise, no turn of the event loop); else when it may. */
  admit(): Promise<void> | undefined {
    if (!this.#held) {
      if (this.#gaveUp || this.#logs.backlog < this.#limits.high) return undefined;
      this.#close();
    }
    this.heldRequests++;
    return this.#held!.promise;
  }

  #close(): void {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    const timer = setTimeout(() => {
      this.#gaveUp = true;
      this.#open();
    }, this.#limits.maxHoldMs);
    this.#held = {
      promise,
      open: () => {
        clearTimeout(timer);
        open();
      },
    };
  }

  #open(): void {
    const held = this.#held;
    this.#held = undefined;
    held?.open();
  }

  #settled(): void {
    if (this.#logs.backlog > this.#limits.low) return;
    this.#gaveUp = false;
    this.#open();
  }
}
