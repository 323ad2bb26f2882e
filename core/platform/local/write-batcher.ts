import type { SqliteDatabase } from "./sqlite.ts";
import { toStoreError } from "./sqlite.ts";

interface PendingWrite {
  work: () => unknown;
  what: string;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Groups the writes issued during one turn of the event loop into one SQLite transaction. A commit (WAL
 * append and lock) costs far more than the statements in it, and a busy gateway issues many small writes at
 * once (a log record, analytics counters, rate-limit counters), so this keeps the per-request write cost low.
 * Each write still runs on its own, in order, inside a savepoint: its result and its error (a failed
 * condition, say) are its own, and exactness under concurrency is unchanged (one writer thread).
 */
export class WriteBatcher {
  readonly #db: SqliteDatabase;
  readonly #commit: ReturnType<typeof batchTransaction>;
  #pending: PendingWrite[] = [];

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#commit = batchTransaction(db);
  }

  /** Queues `work` (synchronous statements) for the next commit and resolves with its result. */
  run<T>(what: string, work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.length === 0) setImmediate(() => this.#flush());
      this.#pending.push({ work, what, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #flush(): void {
    const writes = this.#pending;
    this.#pending = [];
    if (writes.length === 0) return;
    let results: Array<{ ok: boolean; value: unknown }>;
    try {
      if (!this.#db.open) throw new TypeError("The database connection is not open");
      results = this.#commit.immediate(writes);
    } catch (error) {
      for (const write of writes) write.reject(toStoreError(error, write.what));
      return;
    }
    results.forEach((result, index) => {
      const write = writes[index]!;
      if (result.ok) write.resolve(result.value);
      else write.reject(toStoreError(result.value, write.what));
    });
  }
}

/** One transaction over a batch; each write in a savepoint (a nested better-sqlite3 transaction) of its own. */
function batchTransaction(db: SqliteDatabase) {
  const savepoint = db.transaction((work: () => unknown) => work());
  return db.transaction((writes: PendingWrite[]) =>
    writes.map((write) => {
      try {
        return { ok: true, value: savepoint(write.work) };
      } catch (error) {
        return { ok: false, value: error };
      }
    }),
  );
}
