import type { LatePayload } from "../../logs/late-json.ts";
import type { LogFacts } from "../../logs/log-search.ts";
import type { RecordItem, RecordUpdate, WriteCondition } from "../../store/ports.ts";
import type { StoredRow } from "./sqlite-records.ts";
import type { SentError } from "./thread-errors.ts";

/**
 * One write of a Records store, sent to the thread that owns the database (worker-records.ts). An item goes
 * as its stored row, serialised here: copying a few strings to the thread costs a fraction of copying the
 * item's object graph. A request log's put carries the facts its search index holds (sqlite-log-index.ts),
 * indexed in the same transaction.
 */
export type RecordWriteOp =
  | { id: number; op: "put"; row: StoredRow; condition?: WriteCondition; late?: LateAttribute[]; facts?: LogFacts }
  | { id: number; op: "update"; pk: string; sk: string; update: RecordUpdate; condition?: WriteCondition }
  | { id: number; op: "delete"; pk: string; sk: string; condition?: WriteCondition };

/** A write before it is given its id (per member of the union). */
export type UnsentRecordWrite = RecordWriteOp extends infer Op ? (Op extends unknown ? Omit<Op, "id"> : never) : never;

/** An attribute the row's `data` leaves out, to be produced by the thread and added (a LateJson value). */
export interface LateAttribute {
  name: string;
  payload: LatePayload;
}

/** The answer to one write, sent once the write is committed (or failed). */
export type RecordWriteResult =
  | { id: number; ok: true; value?: RecordItem }
  | { id: number; ok: false; error: SentError };

export interface RecordWritesMessage {
  kind: "records";
  ops: RecordWriteOp[];
}

export interface RecordResultsMessage {
  kind: "records";
  results: RecordWriteResult[];
}
