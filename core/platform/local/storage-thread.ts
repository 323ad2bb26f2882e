import { Worker } from "node:worker_threads";
import type { CheckpointLoopOptions } from "./wal-checkpoint-loop.ts";

/** The worker's entry: next to this file when run from source, next to the bundle in a build (scripts/build.ts). */
const STORAGE_WORKER = new URL(
  import.meta.url.endsWith(".ts") ? "./storage-worker.ts" : "./storage-worker.mjs",
  import.meta.url,
);

export interface StorageThreadOptions {
  checkpoint: CheckpointLoopOptions;
  /** A SQLite file whose Records writes the thread makes (worker-records.ts). */
  recordsFile?: string;
}

type Message = { kind: string } & Record<string, unknown>;

/**
 * The worker thread of the local stores (storage-worker.ts): WAL checkpoints and request-log writes, off the
 * event loop. It never keeps the process alive on its own, except while some caller waits for it (`hold`).
 */
export class StorageThread {
  readonly #worker: Worker;
  readonly #handlers = new Map<string, (message: Message) => void>();
  readonly #exitHandlers: Array<(expected: boolean) => void> = [];
  #holds = 0;
  #closing = false;
  #exited = false;
  readonly #exit: Promise<void>;

  constructor(options: StorageThreadOptions) {
    this.#worker = new Worker(STORAGE_WORKER, {
      workerData: options,
      // None of the process's flags: the worker needs none (V8's apply to the whole process anyway), and some
      // refuse to start a worker (`--input-type` of a script given with -e).
      execArgv: [],
      // Messages in, a few small objects per write: small heap limits keep the thread's memory small.
      resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 24 },
    });
    this.#worker.on("message", (message: Message | "closed") => {
      if (typeof message === "object") this.#handlers.get(message.kind)?.(message);
    });
    this.#worker.on("error", (error) => console.error("storage worker failed", error));
    this.#exit = new Promise((resolve) =>
      this.#worker.on("exit", () => {
        this.#exited = true;
        for (const handler of this.#exitHandlers) handler(this.#closing);
        resolve();
      }),
    );
    this.#worker.unref();
  }

  /** True once the thread is gone. */
  get exited(): boolean {
    return this.#exited;
  }

  /** True once close() was called: work sent now would not be done. */
  get closing(): boolean {
    return this.#closing;
  }

  /** Resolves when the thread has exited (closed, or died). */
  whenExited(): Promise<void> {
    return this.#exit;
  }

  /** Messages of one kind from the thread. */
  on(kind: string, handler: (message: Message) => void): void {
    this.#handlers.set(kind, handler);
  }

  /** Called when the thread exits; `expected` is true when close() asked it to. */
  onExit(handler: (expected: boolean) => void): void {
    this.#exitHandlers.push(handler);
  }

  post(message: Message): void {
    this.#worker.postMessage(message);
  }

  /** Keeps the process alive until `release`: someone waits for the thread's answer. */
  hold(): void {
    if (this.#holds++ === 0) this.#worker.ref();
  }

  release(): void {
    if (--this.#holds === 0 && !this.#closing) this.#worker.unref();
  }

  /** Last checkpoint, open writes committed and answered, connections closed; then the thread ends. */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#exited) return;
    const closed = new Promise<void>((resolve) => {
      this.#worker.on("message", (message) => message === "closed" && resolve());
      this.#worker.once("exit", () => resolve());
    });
    // Closing waits for the worker's answer (unref'd, it would not keep the process alive until then).
    this.#worker.ref();
    this.#worker.postMessage("close");
    await closed;
    await this.#worker.terminate();
  }
}
