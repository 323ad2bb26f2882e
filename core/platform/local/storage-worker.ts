import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { ConditionFailedError, type RecordItem, StoreUnavailableError } from "../../store/ports.ts";
import { openDatabase } from "./sqlite.ts";
import { SqliteRecords } from "./sqlite-records.ts";
import type { StorageReply, StorageRequest } from "./threaded-records.ts";
import { WriteBatcher } from "./write-batcher.ts";

/**
 * The local platform's storage thread (started by threaded-records.ts). It keeps what would otherwise cost
 * the event loop time on every request, and that nothing on the request path waits for:
 * - the request-log records, in their own database file (`logs.db`), so their inserts, JSON and commits run
 *   here and never take the main database's write lock;
 * - the WAL checkpoints of the main database (`gateway.db`): passive ones (they never block its writer), on
 *   a timer, so the file syncs they need happen here instead of inside some request's commit.
 */
const { logsFile, checkpointFile, checkpointIntervalMs } = workerData as {
  logsFile: string;
  checkpointFile: string;
  checkpointIntervalMs: number;
};

const logsDb = openDatabase(logsFile);
const logWrites = new WriteBatcher(logsDb);
const logs = new SqliteRecords(logsDb, logWrites);
const gatewayDb = new Database(checkpointFile, { timeout: 5_000 });

const checkpoint = () => {
  try {
    gatewayDb.pragma("wal_checkpoint(PASSIVE)");
  } catch (error) {
    // Busy: the next tick tries again (until then the data is safe in the WAL).
    if ((error as { code?: string }).code !== "SQLITE_BUSY") console.error("WAL checkpoint failed", error);
  }
};
const timer = setInterval(checkpoint, checkpointIntervalMs);

async function handle(request: StorageRequest): Promise<unknown> {
  switch (request.op) {
    case "get":
      return logs.get(...request.args);
    case "put":
      return logs.put(...request.args);
    case "putMany":
      // One message, many logs: each is its own write (a bad one fails the message, reported to each caller).
      return Promise.all(request.args[0].map((json) => logs.put(JSON.parse(json) as RecordItem)));
    case "update":
      return logs.update(...request.args);
    case "delete":
      return logs.delete(...request.args);
    case "query":
      return logs.query(...request.args);
  }
}

/** Errors cross the thread boundary as their kind: the main side throws the same classes again. */
function describe(error: unknown): StorageReply["error"] {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof ConditionFailedError) return { kind: "condition", message };
  if (error instanceof StoreUnavailableError) return { kind: "unavailable", message };
  if (error instanceof RangeError) return { kind: "range", message };
  return { kind: "other", message };
}

parentPort?.on("message", (request: StorageRequest | { op: "close"; id: number }) => {
  if (request.op === "close") {
    clearInterval(timer);
    checkpoint();
    logWrites.flush();
    logsDb.close();
    gatewayDb.close();
    parentPort?.postMessage({ id: request.id, ok: true } satisfies StorageReply);
    return;
  }
  handle(request).then(
    (value) => parentPort?.postMessage({ id: request.id, ok: true, value } satisfies StorageReply),
    (error) => parentPort?.postMessage({ id: request.id, ok: false, error: describe(error) } satisfies StorageReply),
  );
});
