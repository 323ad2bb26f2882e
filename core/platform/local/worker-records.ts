import {
  type Page,
  type RecordItem,
  type RecordQuery,
  type Records,
  type RecordUpdate,
  StoreUnavailableError,
  type WriteCondition,
} from "../../store/ports.ts";
import { checkItem, checkUpdate } from "../../store/record-rules.ts";
import type { LogFacts } from "../../observe/logs/log-search.ts";
import { lateAttributes } from "./late-attributes.ts";
import { applyWrite } from "./record-write-service.ts";
import type {
  RecordResultsMessage,
  RecordWriteOp,
  RecordWriteResult,
  UnsentRecordWrite,
} from "./record-write-protocol.ts";
import { received } from "./thread-errors.ts";
import type { SqliteLogIndex } from "./sqlite-log-index.ts";
import { type SqliteRecords, storedRow } from "./sqlite-records.ts";
import type { StorageThread } from "./storage-thread.ts";

/**
 * Writes wait this long to travel together: each message wakes the thread, which costs the event loop. Longer
 * waits keep each request's log objects alive longer, so more of them outlive the young generation and the
 * resident memory grows, for no CPU saved.
 */
const SEND_DELAY_MS = 5;

interface Waiting {
  resolve(value: RecordItem | undefined): void;
  reject(error: unknown): void;
}

/**
 * Writes waiting for the thread beyond which new ones fail as unavailable (the logger's circuit breaker then
 * skips logging for a while): about a second of a busy gateway's logs. A thread that far behind (a saturated
 * machine: it runs at a lower priority) must not make the waiting logs grow without bound.
 */
const MAX_WAITING = 2048;

/**
 * Records in a SQLite file of their own whose writes the storage thread makes (record-write-service.ts): the
 * request logs, one insert per request, whose statement, commit and WAL writes would otherwise be the event
 * loop's. Reads use `local`, a main-thread connection to the same file;
 * a write resolves once the thread has committed it, so what a caller was told is written, reads find.
 *
 * Writes made within 5 ms travel in one message, committed by the thread as one transaction. Validation
 * errors are thrown here, as the SQLite adapter throws them. Once the thread is gone (closed, or died), writes
 * go to `local`: those made while it closes wait for it to finish (its connection holds the write lock until
 * then); those it had been sent when it died fail as unavailable.
 */
export class WorkerRecords implements Records {
  readonly #local: SqliteRecords;
  /** The search index on `local`'s connection, for request logs written here once the thread is gone. */
  readonly #localIndex: SqliteLogIndex;
  readonly #thread: StorageThread;
  readonly #waiting = new Map<number, Waiting>();
  #queue: RecordWriteOp[] = [];
  #nextId = 1;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Whether the thread is held (keeps the process alive) for the writes waiting. */
  #holding = false;
  #settledListeners: Array<() => void> = [];

  constructor(local: SqliteRecords, localIndex: SqliteLogIndex, thread: StorageThread) {
    this.#local = local;
    this.#localIndex = localIndex;
    this.#thread = thread;
    thread.on("records", (message) => this.#settle((message as unknown as RecordResultsMessage).results));
    thread.onExit(() => this.#threadGone());
  }

  /** Writes the thread has not answered yet (log-backlog-gate.ts holds new requests while it is long). */
  get backlog(): number {
    return this.#waiting.size;
  }

  /** Calls `listener` each time the thread answered writes. */
  onSettled(listener: () => void): void {
    this.#settledListeners.push(listener);
  }

  get(pk: string, sk: string): Promise<RecordItem | undefined> {
    return this.#local.get(pk, sk);
  }

  query(query: RecordQuery): Promise<Page<RecordItem>> {
    return this.#local.query(query);
  }

  /**
   * Not async: the item is serialised here and not held while the thread writes it (request logs are large).
   * LateJson attributes (deferred log bodies) are produced by the thread (a streamed answer is assembled there).
   */
  put(item: RecordItem, condition?: WriteCondition): Promise<void> {
    return this.#put(item, condition, undefined);
  }

  /** put() of a request log's record, with the facts its search index holds (written in the same transaction). */
  putIndexed(item: RecordItem, facts: LogFacts): Promise<void> {
    return this.#put(item, undefined, facts);
  }

  #put(item: RecordItem, condition: WriteCondition | undefined, facts: LogFacts | undefined): Promise<void> {
    try {
      checkItem(item);
      const late = lateAttributes(item);
      if (!late)
        return this.#write({ op: "put", row: storedRow(item), condition, facts }) as Promise<unknown> as Promise<void>;
      const plain = { ...item };
      for (const { name } of late) plain[name] = undefined;
      return this.#write({
        op: "put",
        row: storedRow(plain),
        condition,
        late,
        facts,
      }) as Promise<unknown> as Promise<void>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async update(pk: string, sk: string, update: RecordUpdate, condition?: WriteCondition): Promise<RecordItem> {
    checkUpdate(update);
    return (await this.#write({ op: "update", pk, sk, update, condition })) as RecordItem;
  }

  async delete(pk: string, sk: string, condition?: WriteCondition): Promise<void> {
    await this.#write({ op: "delete", pk, sk, condition });
  }

  /** Sends the writes not yet sent at once (before the thread is asked to close). */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#queue.length === 0 || this.#thread.exited) return;
    const ops = this.#queue;
    this.#queue = [];
    this.#thread.post({ kind: "records", ops });
  }

  #write(op: UnsentRecordWrite): Promise<RecordItem | undefined> {
    if (this.#thread.exited) return this.#writeLocally(op);
    if (this.#thread.closing) return this.#thread.whenExited().then(() => this.#writeLocally(op));
    if (this.#waiting.size >= MAX_WAITING) {
      return Promise.reject(new StoreUnavailableError("the storage thread is too far behind; write not made"));
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      if (!this.#holding) {
        this.#holding = true;
        this.#thread.hold();
      }
      this.#queue.push({ ...op, id } as RecordWriteOp);
      this.#timer ??= setTimeout(() => this.flush(), SEND_DELAY_MS);
    });
  }

  #writeLocally(op: UnsentRecordWrite): Promise<RecordItem | undefined> {
    return applyWrite(this.#local, this.#localIndex, op);
  }

  #settle(results: RecordWriteResult[]): void {
    for (const result of results) {
      const waiting = this.#waiting.get(result.id);
      if (!waiting) continue;
      this.#waiting.delete(result.id);
      if (result.ok) waiting.resolve(result.value);
      else waiting.reject(received(result.error));
    }
    this.#releaseWhenIdle();
    for (const listener of this.#settledListeners) listener();
  }

  /** Writes not sent yet are made here; those the thread had were lost with it (or answered before it ended). */
  #threadGone(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const unsent = this.#queue;
    this.#queue = [];
    for (const op of unsent) {
      const waiting = this.#waiting.get(op.id)!;
      this.#waiting.delete(op.id);
      this.#writeLocally(op).then(waiting.resolve, waiting.reject);
    }
    const error = new StoreUnavailableError("the storage thread stopped before answering");
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
    this.#releaseWhenIdle();
    for (const listener of this.#settledListeners) listener();
  }

  #releaseWhenIdle(): void {
    if (this.#waiting.size === 0 && this.#holding) {
      this.#holding = false;
      this.#thread.release();
    }
  }
}
