import type { SqliteDatabase } from "./sqlite.ts";
import type { StorageThread } from "./storage-thread.ts";

/**
 * Moves WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit
 * crosses the threshold and syncs the files there: on a busy gateway that is a request stalling for
 * milliseconds. The main connection turns automatic
 * checkpoints off and the storage thread checkpoints on a timer with its own connection (wal-checkpoint-loop.ts).
 *
 * Under steady load the main connection always has a batch transaction open or about to open, so the WAL is
 * never wholly copied at the moment a transaction starts, and SQLite only starts the file over (instead of
 * appending) in that moment: the WAL would grow without end. So once the thread reports a long WAL, the main
 * connection checkpoints the few frames committed since the thread's pass right after one of its commits (a
 * millisecond or a few, rarely); its next transaction then starts the WAL over, and `journal_size_limit`
 * (sqlite.ts) trims the file.
 */

export interface WalCheckpointOptions {
  /** How often the thread checkpoints, ms. */
  intervalMs?: number;
  /** WAL length (pages) from which the main connection finishes a checkpoint so the WAL starts over. */
  restartPages?: number;
}

/** 4096 pages of 4 KiB: 16 MiB of WAL, one wal-index hash table to search on reads. */
const DEFAULT_RESTART_PAGES = 4096;

/** What the storage thread needs to checkpoint `db` (StorageThreadOptions.checkpoint). */
export function checkpointLoopOptions(db: SqliteDatabase, options: WalCheckpointOptions = {}) {
  return {
    file: db.name,
    intervalMs: options.intervalMs ?? 250,
    restartPages: options.restartPages ?? DEFAULT_RESTART_PAGES,
  };
}

export class WalCheckpointer {
  readonly #db: SqliteDatabase;
  #restartWanted = false;

  /** `thread` runs the checkpoint loop of `db` (started with checkpointLoopOptions(db)). */
  constructor(db: SqliteDatabase, thread: StorageThread) {
    this.#db = db;
    db.pragma("wal_autocheckpoint = 0");
    thread.on("checkpoint", () => {
      this.#restartWanted = true;
    });
    thread.onExit((expected) => {
      if (expected || !db.open) return;
      // Nothing would checkpoint any more: SQLite's own checkpoints (inside commits) keep the WAL bounded.
      console.error("storage worker stopped; the database checkpoints inside its commits from now on");
      db.pragma("wal_autocheckpoint = 1000");
    });
  }

  /**
   * Called right after a commit of the main connection (no transaction open): when the WAL has grown long,
   * copies what the thread has not yet copied. PASSIVE never waits; if the thread is mid-pass this returns at
   * once and the thread's next report asks again.
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
}
