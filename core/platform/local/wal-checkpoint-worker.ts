import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

/**
 * Runs in a worker thread (wal-checkpointer.ts): copies the WAL back into the database file every
 * `intervalMs` with its own connection. A passive checkpoint never blocks the gateway's writer, and its file
 * syncs happen here instead of inside some request's commit. When the WAL has grown past `restartPages`, it
 * tells the main thread, whose connection alone can make the WAL start over.
 */
const { file, intervalMs, restartPages } = workerData as { file: string; intervalMs: number; restartPages: number };
const db = new Database(file, { timeout: 5_000 });
// A checkpoint copies WAL frames into the database file; it needs no large page cache (better-sqlite3's is 16 MB).
db.pragma("cache_size = -1024");

const checkpoint = () => {
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)") as Array<{ busy: number; log: number }>;
    if (result && result.log >= restartPages) parentPort?.postMessage({ walPages: result.log });
  } catch (error) {
    // Busy or closed: the next tick tries again (the main connection still has the data in the WAL).
    if (!db.open) clearInterval(timer);
    else if ((error as { code?: string }).code !== "SQLITE_BUSY") console.error("WAL checkpoint failed", error);
  }
};
const timer = setInterval(checkpoint, intervalMs);

parentPort?.on("message", (message) => {
  if (message !== "close") return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort?.postMessage("closed");
});
