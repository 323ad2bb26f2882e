import { Worker } from "node:worker_threads";
import type { SqliteDatabase } from "./sqlite.ts";

/**
 * Moves WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit
 * crosses the threshold and syncs the files there: on a busy gateway that is a request stalling for
 * milliseconds (and half of the wall time of a log write, measured). The main connection turns automatic
 * checkpoints off and a worker thread checkpoints on a timer with its own connection.
 *
 * Under steady load the main connection always has a batch transaction open or about to open, so the WAL is
 * never wholly copied at the moment a transaction starts, and SQLite only starts the file over (instead of
 * appending) in that moment: the WAL would grow without end. So once the worker reports a long WAL, the main
 * connection checkpoints the few frames committed since the worker's pass right after one of its commits (a
 * millisecond or a few, rarely); its next transaction then starts the WAL over, and `journal_size_limit`
 * (sqlite.ts) trims the file.
 */
/** The worker's entry: next to this file when run from source, next to the bundle in a build (scripts/build.ts). */
const CHECKPOINT_WORKER = new URL(
  import.meta.url.endsWith(".ts") ? "./wal-checkpoint-worker.ts" : "./wal-checkpoint-worker.mjs",
  import.meta.url,
);

export interface WalCheckpointOptions {
  /** How often the worker checkpoints, ms. */
  intervalMs?: number;
  /** WAL length (pages) from which the main connection finishes a checkpoint so the WAL starts over. */
  restartPages?: number;
}

/** 4096 pages of 4 KiB: 16 MiB of WAL, one wal-index hash table to search on reads. */
const DEFAULT_RESTART_PAGES = 4096;

export class WalCheckpointer {
  readonly #db: SqliteDatabase;
  readonly #worker: Worker;
  #restartWanted = false;
  #closing = false;
  #exited = false;

  constructor(db: SqliteDatabase, options: WalCheckpointOptions = {}) {
    this.#db = db;
    db.pragma("wal_autocheckpoint = 0");
    this.#worker = new Worker(CHECKPOINT_WORKER, {
      workerData: {
        file: db.name,
        intervalMs: options.intervalMs ?? 250,
        restartPages: options.restartPages ?? DEFAULT_RESTART_PAGES,
      },
      // It allocates next to nothing: small heap limits keep the thread's memory small.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    });
    this.#worker.on("message", (message: { walPages?: number }) => {
      if (message.walPages !== undefined) this.#restartWanted = true;
    });
    this.#worker.on("error", (error) => console.error("WAL checkpoint worker failed", error));
    this.#worker.on("exit", () => {
      this.#exited = true;
      if (this.#closing || !db.open) return;
      // Nothing would checkpoint any more: SQLite's own checkpoints (inside commits) keep the WAL bounded.
      console.error("WAL checkpoint worker stopped; the database checkpoints inside its commits from now on");
      db.pragma("wal_autocheckpoint = 1000");
    });
    // It must never keep the process alive on its own.
    this.#worker.unref();
  }

  /**
   * Called right after a commit of the main connection (no transaction open): when the WAL has grown long,
   * copies what the worker has not yet copied. PASSIVE never waits; if the worker is mid-pass this returns at
   * once and the worker's next report asks again.
   */
  afterCommit(): void {
    if (!this.#restartWanted) return;
    this.#restartWanted = false;
    try {
      this.#db.pragma("wal_checkpoint(PASSIVE)");
    } catch (error) {
      console.error("WAL checkpoint failed", error);
    }
  }

  /** A last checkpoint, then the worker's connection closes. */
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
