import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import type { LogSearchRequest, LogSearchResult } from "./log-reader-thread.ts";
import { openDatabase } from "./sqlite.ts";
import { SqliteLogSearch } from "./sqlite-log-search.ts";
import { sendable } from "./thread-errors.ts";

/**
 * The log reader thread (log-reader-thread.ts starts it): request-log searches on a read-only connection of its
 * own to logs.db (WAL: it reads beside the storage thread's writes, and neither waits for the other), one at a
 * time, off the gateway's event loop.
 */
// Below the storage thread's priority (+10, storage-worker.ts), which is below the event loop's: on a busy
// machine searches wait, and neither requests nor log writes wait for them. Linux only (elsewhere the call would
// lower the whole process).
if (process.platform === "linux") {
  try {
    setPriority(Math.min(19, getPriority() + 15));
  } catch {
    // Not permitted (some containers): the thread keeps the process's priority.
  }
}

/** Page cache of the reader's connection, KiB: index pages of the searches under way. */
const READER_PAGE_CACHE_KIB = 2048;

const { file } = workerData as { file: string };
const db = openDatabase(file, READER_PAGE_CACHE_KIB);
db.pragma("query_only = 1");
const logs = new SqliteLogSearch(db);
const port = parentPort!;

// Searches are synchronous reads between awaits of settled promises: one message's search ends before the next
// message is taken.
port.on("message", async ({ id, search }: LogSearchRequest) => {
  let result: LogSearchResult;
  try {
    result = { id, page: await logs.search(search) };
  } catch (error) {
    result = { id, error: sendable(error) };
  }
  port.postMessage(result);
});
