import Database from "better-sqlite3";

export interface CheckpointLoopOptions {
  /** The database whose WAL is copied back. */
  file: string;
  intervalMs: number;
  /** WAL length (pages) from which `onLongWal` is called. */
  restartPages: number;
}

/**
 * Runs in the storage worker thread (storage-worker.ts, wal-checkpointer.ts): copies the WAL back into the
 * database file every `intervalMs` with its own connection. A passive checkpoint never blocks the gateway's
 * writer, and its file syncs happen here instead of inside some request's commit. When the WAL has grown past
 * `restartPages`, `onLongWal` tells the main thread, whose connection alone can make the WAL start over.
 */
export function startCheckpointLoop(options: CheckpointLoopOptions, onLongWal: (walPages: number) => void) {
  const db = new Database(options.file, { timeout: 5_000 });
  // A checkpoint copies WAL frames into the database file; it needs no large page cache (better-sqlite3's is 16 MB).
  db.pragma("cache_size = -1024");

  const checkpoint = () => {
    try {
      const [result] = db.pragma("wal_checkpoint(PASSIVE)") as Array<{ busy: number; log: number }>;
      if (result && result.log >= options.restartPages) onLongWal(result.log);
    } catch (error) {
      // Busy or closed: the next tick tries again (the main connection still has the data in the WAL).
      if (!db.open) clearInterval(timer);
      else if ((error as { code?: string }).code !== "SQLITE_BUSY") console.error("WAL checkpoint failed", error);
    }
  };
  const timer = setInterval(checkpoint, options.intervalMs);

  return {
    /** A last checkpoint, then the connection closes. */
    close(): void {
      clearInterval(timer);
      checkpoint();
      db.close();
    },
  };
}
