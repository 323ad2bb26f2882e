import type { LatePayload } from "../../observe/logs/late-json.ts";
import type { RecordItem, RecordUpdate, WriteCondition } from "../../store/ports.ts";
import type { StoredRow } from "./sqlite-records.ts";

/**
 * One write of a Records store, sent to the thread that owns the database (worker-records.ts). An item goes
 * as its stored row, serialised here: copying a few strings to the thread costs a fraction of copying the
 * item's object graph.
 */
export type RecordWriteOp =
  | { id: number; op: "put"; row: StoredRow; condition?: WriteCondition; late?: LateAttribute[] }
  | { id: number; op: "update"; pk: string; sk: string; update: RecordUpdate; condition?: WriteCondition }
  | { id: number; op: "delete"; pk: string; sk: string; condition?: WriteCondition };

/** An attribute the row's `data` leaves out, to be produced by the thread and added (a LateJson value). */
export interface LateAttribute {
  name: string;
  payload: LatePayload;
}

/** An error crossing the thread boundary: its class is found again by name on the other side. */
export interface SentError {
  name: string;
  message: string;
  code?: string;
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
