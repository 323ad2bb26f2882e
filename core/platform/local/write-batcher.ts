import type { SqliteDatabase } from "./sqlite.ts";
import { toStoreError } from "./sqlite.ts";
import { StoreUnavailableError } from "../../store/ports.ts";

interface Waiter {
  what: string;
  value: unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** How long the batch transaction stays open; every write issued meanwhile shares its one commit. */
const COMMIT_DELAY_MS = 10;

/**
 * Every write of a connection runs at once (one connection, one thread: exact under concurrency) inside a
 * transaction that stays open for a few milliseconds and then commits everything written meanwhile. A commit
 * (WAL append, lock) costs far more than the statements in it, and a busy gateway issues several small writes
 * per request (counters, records; request logs on the storage thread's connection), so this keeps the
 * per-request write cost low.
 *
 * `run` resolves once the commit is done: a caller that was told "written" finds it on disk. `runNow` answers
 * at once and leaves the commit to follow: for counters whose new value decides the request in flight (a rate
 * limit), where waiting for the commit would add its delay to every request and a crash can at most lose the
 * last few milliseconds of counts.
 */
export class WriteBatcher {
  readonly #db: SqliteDatabase;
  readonly #begin;
  readonly #commit;
  readonly #rollback;
  #waiters: Waiter[] = [];
  readonly #beforeCommit: Array<() => void> = [];
  readonly #afterCommit: Array<() => void> = [];
  readonly #afterRollback: Array<() => void> = [];
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#begin = db.prepare("BEGIN IMMEDIATE");
    this.#commit = db.prepare("COMMIT");
    this.#rollback = db.prepare("ROLLBACK");
  }

  /** `work` to run inside every batch right before it commits (write-behind caches flush here). */
  beforeCommit(work: () => void): void {
    this.#beforeCommit.push(work);
  }

  /** `work` to run right after a commit, outside any transaction (WAL housekeeping); it must not throw. */
  afterCommit(work: () => void): void {
    this.#afterCommit.push(work);
  }

  /** `work` to run once a batch's writes are rolled back (caches of what the batch wrote forget it); must not throw. */
  afterRollback(work: () => void): void {
    this.#afterRollback.push(work);
  }

  /** Runs `work` (synchronous statements) in the open batch and resolves with its result after the commit. */
  run<T>(what: string, work: () => T): Promise<T> {
    let value: T;
    try {
      value = this.runNow(what, work);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      this.#waiters.push({ what, value, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Runs `work` in the open batch and returns its result before the commit (see the class comment). */
  runNow<T>(what: string, work: () => T): T {
    try {
      // SQLite rolls a transaction back by itself on some faults (I/O, full disk): the batch's writes are gone,
      // and so are the promises of the writes waiting for it.
      if (this.#timer !== undefined && !this.#db.inTransaction) this.#abandon();
      // A closed database throws from here (mapped to StoreUnavailableError below).
      if (this.#timer === undefined) {
        this.#begin.run();
        this.#timer = setTimeout(() => this.flush(), COMMIT_DELAY_MS);
      }
      return work();
    } catch (error) {
      throw toStoreError(error, what);
    }
  }

  #abandon(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const waiters = this.#waiters;
    this.#waiters = [];
    const error = new StoreUnavailableError("the database rolled the write batch back");
    for (const waiter of waiters) waiter.reject(error);
    for (const work of this.#afterRollback) work();
  }

  /** Commits the open batch now (also what the timer does); call before closing the database. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const waiters = this.#waiters;
    this.#waiters = [];
    try {
      // SQLite rolls a transaction back by itself on some faults (I/O, full disk): its writes are gone.
      if (!this.#db.open) {
        if (waiters.length > 0) throw new TypeError("The database connection is not open");
        return;
      }
      if (!this.#db.inTransaction) {
        if (waiters.length > 0) throw new StoreUnavailableError("the database rolled the write batch back");
        return;
      }
      for (const work of this.#beforeCommit) work();
      this.#commit.run();
    } catch (error) {
      if (this.#db.open && this.#db.inTransaction) this.#rollback.run();
      for (const waiter of waiters) waiter.reject(toStoreError(error, waiter.what));
      for (const work of this.#afterRollback) work();
      return;
    }
    for (const waiter of waiters) waiter.resolve(waiter.value);
    for (const work of this.#afterCommit) work();
  }
}
