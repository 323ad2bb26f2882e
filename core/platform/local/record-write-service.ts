import type { RecordItem } from "../../store/ports.ts";
import { addLateAttributes } from "./late-attributes.ts";
import type { RecordWriteOp, RecordWriteResult, UnsentRecordWrite } from "./record-write-protocol.ts";
import { sendable } from "./thread-errors.ts";
import { LOG_PAGE_CACHE_KIB, openDatabase } from "./sqlite.ts";
import { SqliteLogIndex } from "./sqlite-log-index.ts";
import { SqliteRecords } from "./sqlite-records.ts";
import { WriteBatcher } from "./write-batcher.ts";

/**
 * Runs in the storage worker thread: applies the writes of a Records store kept in its own SQLite file
 * (request logs, see worker-records.ts), and keeps the logs' search index (sqlite-log-index.ts): each log's
 * facts in the transaction of its record, and, while the thread is otherwise idle, the index of logs written
 * before it existed. Each message's writes are one transaction, and their results go back in one message once
 * it has committed.
 */
export function serveRecordWrites(file: string, reply: (results: RecordWriteResult[]) => void) {
  const db = openDatabase(file, LOG_PAGE_CACHE_KIB);
  const writes = new WriteBatcher(db);
  const records = new SqliteRecords(db, writes);
  const logIndex = new SqliteLogIndex(db, writes);
  const inFlight = new Set<Promise<void>>();
  let closing = false;

  const apply = (op: RecordWriteOp) => applyWrite(records, logIndex, op);

  // A step at a time, each after the writes already waiting (a macrotask: the thread's messages come first).
  const backfill = () => {
    if (closing) return;
    logIndex.backfillStep().then(
      (more) => more && setTimeout(backfill, 0),
      (error) => console.error("log index backfill failed", error),
    );
  };
  setTimeout(backfill, 0);

  return {
    handle(ops: RecordWriteOp[]): void {
      // The statements run now; only the ids wait for the commit (the rows need not stay in memory until then).
      const ids = ops.map((op) => op.id);
      const applied = ops.map(apply);
      // A message already gathers milliseconds of writes: it is committed at once, as one transaction, so
      // the caller's log objects are released sooner (kept 30 ms and more, they outlived the young generation).
      writes.flush();
      const done = Promise.allSettled(applied).then((settled) => {
        inFlight.delete(done);
        reply(
          settled.map((outcome, index): RecordWriteResult => {
            const id = ids[index]!;
            if (outcome.status === "fulfilled") return { id, ok: true, value: outcome.value };
            return { id, ok: false, error: sendable(outcome.reason) };
          }),
        );
      });
      inFlight.add(done);
    },

    /** Commits what is open, answers every write still waiting, then closes the connection. */
    async close(): Promise<void> {
      closing = true;
      writes.flush();
      await Promise.all(inFlight);
      db.close();
    },
  };
}

/**
 * Applies one write to a Records store and the log search index on the same connection: on the storage thread,
 * or on the main thread's connection once the thread is gone (worker-records.ts). Never throws: failures reject.
 */
export function applyWrite(
  records: SqliteRecords,
  logIndex: SqliteLogIndex,
  op: UnsentRecordWrite,
): Promise<RecordItem | undefined> {
  switch (op.op) {
    case "put": {
      if (op.late) addLateAttributes(op.row, op.late);
      const put = records.putRow(op.row, op.condition).then(() => undefined);
      if (!op.facts) return put;
      try {
        logIndex.add(op.facts, op.row.ttl ?? undefined);
      } catch (error) {
        // Stored but not searchable: the write is reported failed.
        return put.then(() => Promise.reject(error));
      }
      return put;
    }
    case "update":
      return records.update(op.pk, op.sk, op.update, op.condition);
    case "delete":
      return records.delete(op.pk, op.sk, op.condition).then(() => undefined);
  }
}
