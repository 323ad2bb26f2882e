import { Worker } from "node:worker_threads";
import type { SqliteDatabase } from "./sqlite.ts";

/**
 * Moves WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit
 * crosses the threshold and syncs the files there: on a busy gateway that is a request stalling for
 * milliseconds (and half of the wall time of a log write, measured). The main connection turns automatic
 * checkpoints off and a worker thread checkpoints on a timer with its own connection.
 */
/** The worker's entry: next to this file when run from source, next to the bundle in a build (scripts/build.ts). */
const CHECKPOINT_WORKER = new URL(
  import.meta.url.endsWith(".ts") ? "./wal-checkpoint-worker.ts" : "./wal-checkpoint-worker.mjs",
  import.meta.url,
);

export class WalCheckpointer {
  readonly #worker: Worker;

  constructor(db: SqliteDatabase, options: { intervalMs?: number } = {}) {
    db.pragma("wal_autocheckpoint = 0");
    this.#worker = new Worker(CHECKPOINT_WORKER, {
      workerData: { file: db.name, intervalMs: options.intervalMs ?? 250 },
      // It allocates next to nothing: small heap limits keep the thread's memory small.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    });
    this.#worker.on("error", (error) => console.error("WAL checkpoint worker failed", error));
    // It must never keep the process alive on its own.
    this.#worker.unref();
  }

  /** A last checkpoint, then the worker's connection closes. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => {
      this.#worker.once("message", () => resolve());
      this.#worker.once("exit", () => resolve());
    });
    this.#worker.postMessage("close");
    await closed;
    await this.#worker.terminate();
  }
}
