import { Worker } from "node:worker_threads";
import type { LogSearch, LogSearchPage } from "../../logs/log-search.ts";
import { StoreUnavailableError } from "../../store/ports.ts";
import { received, type SentError } from "./thread-errors.ts";

/** The worker's entry: next to this file when run from source, next to the bundle in a build (scripts/build.ts). */
const READER_WORKER = new URL(
  import.meta.url.endsWith(".ts") ? "./log-reader-worker.ts" : "./log-reader-worker.mjs",
  import.meta.url,
);

export interface LogSearchRequest {
  id: number;
  search: LogSearch;
}

export type LogSearchResult = { id: number; page: LogSearchPage } | { id: number; error: SentError };

export interface LogReaderOptions {
  /** The thread ends after this long without a search (its memory back to the system); default 30 s. */
  idleMs?: number;
  /** Searches waiting beyond which new ones are refused as unavailable (503); default 64. */
  maxWaiting?: number;
}

interface Waiting {
  resolve(page: LogSearchPage): void;
  reject(error: unknown): void;
}

/**
 * Runs request-log searches on a thread of their own (log-reader-worker.ts), so no search, however many logs
 * it reads, holds the gateway's event loop. Started on the first search and ended after a while without one: a
 * gateway whose logs nobody reads pays no memory for it. Searches wait their turn there; past `maxWaiting`
 * new ones are refused (the caller answers 503) rather than queued without bound. A thread that dies fails the
 * searches it had; the next search starts a new one.
 */
export class LogReaderThread {
  readonly #file: string;
  readonly #idleMs: number;
  readonly #maxWaiting: number;
  readonly #waiting = new Map<number, Waiting>();
  #worker: Worker | undefined;
  #nextId = 1;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(file: string, options: LogReaderOptions = {}) {
    this.#file = file;
    this.#idleMs = options.idleMs ?? 30_000;
    this.#maxWaiting = options.maxWaiting ?? 64;
  }

  search(search: LogSearch): Promise<LogSearchPage> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError("the log reader is closed"));
    if (this.#waiting.size >= this.#maxWaiting) {
      return Promise.reject(new StoreUnavailableError("too many log searches waiting; try again shortly"));
    }
    const worker = this.#started();
    const id = this.#nextId++;
    return new Promise<LogSearchPage>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      worker.postMessage({ id, search } satisfies LogSearchRequest);
    });
  }

  /** Whether the thread is running (tests: it starts on demand and ends when idle). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    const worker = this.#worker;
    this.#worker = undefined;
    this.#fail(new StoreUnavailableError("the log reader closed before answering"));
    await worker?.terminate();
  }

  #started(): Worker {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    if (this.#worker) {
      this.#worker.ref();
      return this.#worker;
    }
    const worker = new Worker(READER_WORKER, {
      workerData: { file: this.#file },
      // None of the process's flags (see storage-thread.ts).
      execArgv: [],
      // A page of results at a time: small heap limits keep the thread's memory small.
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 48 },
    });
    worker.on("message", (result: LogSearchResult) => this.#settle(result));
    worker.on("error", (error) => console.error("log reader thread failed", error));
    worker.on("exit", () => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#fail(new StoreUnavailableError("the log reader stopped before answering"));
    });
    this.#worker = worker;
    return worker;
  }

  #settle(result: LogSearchResult): void {
    const waiting = this.#waiting.get(result.id);
    if (!waiting) return;
    this.#waiting.delete(result.id);
    if ("page" in result) waiting.resolve(result.page);
    else waiting.reject(received(result.error));
    if (this.#waiting.size === 0) this.#idle();
  }

  /** Nobody waits: the thread no longer keeps the process alive, and ends if no search comes for a while. */
  #idle(): void {
    const worker = this.#worker;
    if (!worker) return;
    worker.unref();
    this.#idleTimer = setTimeout(() => {
      if (this.#worker !== worker || this.#waiting.size > 0) return;
      this.#worker = undefined;
      void worker.terminate();
    }, this.#idleMs);
    this.#idleTimer.unref();
  }

  #fail(error: Error): void {
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }
}
