import { Worker } from "node:worker_threads";
import type { SqliteDatabase } from "./sqlite.ts";

/**
 * Moves WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit
 * crosses the threshold and syncs the files there: on a busy gateway that is a request stalling for
 * milliseconds (and half of the wall time of a log write, measured). The main connection turns automatic
 * checkpoints off and a worker thread checkpoints on a timer with its own connection.
 */
export class WalCheckpointer {
  readonly #worker: Worker;

  constructor(db: SqliteDatabase, options: { intervalMs?: number } = {}) {
    db.pragma("wal_autocheckpoint = 0");
    this.#worker = new Worker(new URL("./wal-checkpoint-worker.ts", import.meta.url), {
      workerData: { file: db.name, intervalMs: options.intervalMs ?? 250 },
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
