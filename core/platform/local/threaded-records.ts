import { Worker } from "node:worker_threads";
import {
  ConditionFailedError,
  type Page,
  type RecordItem,
  type RecordQuery,
  type Records,
  type RecordUpdate,
  StoreUnavailableError,
  type WriteCondition,
} from "../../store/ports.ts";

/** One call to the storage thread: a Records method and its arguments. */
export type StorageRequest = { id: number } & (
  | { op: "get"; args: [pk: string, sk: string] }
  | { op: "put"; args: [item: RecordItem, condition?: WriteCondition] }
  | { op: "putMany"; args: [items: string[]] }
  | { op: "update"; args: [pk: string, sk: string, update: RecordUpdate, condition?: WriteCondition] }
  | { op: "delete"; args: [pk: string, sk: string, condition?: WriteCondition] }
  | { op: "query"; args: [query: RecordQuery] }
);

export interface StorageReply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: { kind: "condition" | "unavailable" | "range" | "other"; message: string };
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** The worker's entry: next to this file when run from source, next to the bundle in a build (scripts/build.ts). */
const STORAGE_WORKER = new URL(
  import.meta.url.endsWith(".ts") ? "./storage-worker.ts" : "./storage-worker.mjs",
  import.meta.url,
);

/** Calls waiting for the storage thread beyond this many are refused: a stalled thread must not eat memory. */
const MAX_PENDING = 50_000;

/**
 * Records kept by the storage thread (storage-worker.ts): the request logs of the local platform. Every call
 * is a message to that thread, answered when it is done (writes: once committed). The main thread pays for a
 * structured clone of the item instead of the SQL insert, the JSON text and the commit. Also runs the main
 * database's WAL checkpoints there (see the worker).
 */
export class ThreadedRecords implements Records {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #closed = false;
  /** Unconditional puts waiting for the end of this event-loop turn, and the promise of their one message. */
  #batch: string[] | undefined;
  #batchDone: Promise<void> | undefined;

  constructor(options: { logsFile: string; checkpointFile: string; checkpointIntervalMs?: number }) {
    this.#worker = new Worker(STORAGE_WORKER, {
      workerData: { ...options, checkpointIntervalMs: options.checkpointIntervalMs ?? 250 },
    });
    this.#worker.on("message", (reply: StorageReply) => this.#settle(reply));
    this.#worker.on("error", (error) => this.#failAll(`storage thread failed: ${error.message}`));
    this.#worker.on("exit", () => this.#failAll("storage thread stopped"));
    // Idle, it must not keep the process alive; while calls are pending it must.
    this.#worker.unref();
  }

  get(pk: string, sk: string): Promise<RecordItem | undefined> {
    return this.#call({ op: "get", args: [pk, sk] }) as Promise<RecordItem | undefined>;
  }

  async put(item: RecordItem, condition?: WriteCondition): Promise<void> {
    if (condition) {
      await this.#call({ op: "put", args: [item, condition] });
      return;
    }
    // Unconditional puts (every request log) travel as JSON text, all of one event-loop turn in one message:
    // cloning the object graph of each log for postMessage cost more than the SQL insert it replaced.
    let json: string;
    try {
      json = JSON.stringify(item);
    } catch (error) {
      throw new RangeError(`record cannot be stored: ${(error as Error).message}`);
    }
    if (!this.#batch) {
      const batch: string[] = [];
      this.#batch = batch;
      this.#batchDone = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          this.#batch = undefined;
          this.#call({ op: "putMany", args: [batch] }).then(() => resolve(), reject);
        });
      });
    }
    this.#batch.push(json);
    await this.#batchDone;
  }

  update(pk: string, sk: string, update: RecordUpdate, condition?: WriteCondition): Promise<RecordItem> {
    return this.#call({ op: "update", args: [pk, sk, update, condition] }) as Promise<RecordItem>;
  }

  async delete(pk: string, sk: string, condition?: WriteCondition): Promise<void> {
    await this.#call({ op: "delete", args: [pk, sk, condition] });
  }

  query(query: RecordQuery): Promise<Page<RecordItem>> {
    return this.#call({ op: "query", args: [query] }) as Promise<Page<RecordItem>>;
  }

  /** Commits what the thread holds, checkpoints, closes its databases and stops it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    const closed = this.#send({ op: "close" } as never).catch(() => undefined);
    this.#closed = true;
    await closed;
    await this.#worker.terminate();
  }

  #call(request: Omit<StorageRequest, "id">): Promise<unknown> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError("log store: closed"));
    if (this.#pending.size >= MAX_PENDING) {
      return Promise.reject(new StoreUnavailableError("log store: too many writes waiting for the storage thread"));
    }
    return this.#send(request);
  }

  #send(request: Omit<StorageRequest, "id">): Promise<unknown> {
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
      try {
        this.#worker.postMessage({ ...request, id });
      } catch (error) {
        // Not cloneable (a function, a symbol): the caller's mistake, reported like a bad item.
        this.#pending.delete(id);
        reject(new RangeError(`record cannot be stored: ${(error as Error).message}`));
      }
    });
  }

  #settle(reply: StorageReply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (reply.ok) pending.resolve(reply.value);
    else pending.reject(rebuild(reply.error!));
  }

  #failAll(message: string): void {
    this.#closed = true;
    for (const pending of this.#pending.values()) pending.reject(new StoreUnavailableError(message));
    this.#pending.clear();
  }
}

function rebuild(error: NonNullable<StorageReply["error"]>): Error {
  switch (error.kind) {
    case "condition":
      return new ConditionFailedError(error.message);
    case "unavailable":
      return new StoreUnavailableError(error.message);
    case "range":
      return new RangeError(error.message);
    default:
      return new Error(error.message);
  }
}
