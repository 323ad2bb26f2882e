import type { RecordItem } from "../../store/ports.ts";
import { addLateAttributes } from "./late-attributes.ts";
import type { RecordWriteOp, RecordWriteResult, SentError } from "./record-write-protocol.ts";
import { LOG_PAGE_CACHE_KIB, openDatabase } from "./sqlite.ts";
import { SqliteRecords } from "./sqlite-records.ts";
import { WriteBatcher } from "./write-batcher.ts";

/**
 * Runs in the storage worker thread: applies the writes of a Records store kept in its own SQLite file
 * (request logs, see worker-records.ts). Each message's writes are one transaction, and their results go back
 * in one message once it has committed.
 */
export function serveRecordWrites(file: string, reply: (results: RecordWriteResult[]) => void) {
  const db = openDatabase(file, LOG_PAGE_CACHE_KIB);
  const writes = new WriteBatcher(db);
  const records = new SqliteRecords(db, writes);
  const inFlight = new Set<Promise<void>>();

  const apply = (op: RecordWriteOp): Promise<RecordItem | undefined> => {
    switch (op.op) {
      case "put":
        if (op.late) addLateAttributes(op.row, op.late);
        return records.putRow(op.row, op.condition).then(() => undefined);
      case "update":
        return records.update(op.pk, op.sk, op.update, op.condition);
      case "delete":
        return records.delete(op.pk, op.sk, op.condition).then(() => undefined);
    }
  };

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
      writes.flush();
      await Promise.all(inFlight);
      db.close();
    },
  };
}

function sendable(error: unknown): SentError {
  const { name, message, code } = error as { name?: string; message?: string; code?: unknown };
  return {
    name: typeof name === "string" ? name : "Error",
    message: typeof message === "string" ? message : String(error),
    ...(typeof code === "string" ? { code } : {}),
  };
}
