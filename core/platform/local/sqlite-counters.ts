import type { CounterAddOptions, CounterResult, Counters } from "../../store/ports.ts";
import { isExpired, nowSeconds } from "../../store/record-rules.ts";
import type { WriteBatcher } from "./write-batcher.ts";
import { type SqliteDatabase, sqlite } from "./sqlite.ts";

interface Counter {
  value: number;
  expiresAt: number | null;
  /** False for a counter that does not exist yet (or has expired): its first add sets the expiry. */
  exists: boolean;
}

/** Counters kept in memory at most; the least recently used beyond this are read again from the table. */
const MAX_CACHED = 100_000;

/**
 * Counters in a SQLite table, owned by this process (the local platform is one process): the values live in
 * memory once read, every add is decided there (one thread, so the ceiling check and the add are exact), and
 * the table receives each changed counter's latest value once per batch commit (write-batcher.ts) instead of
 * a read and a write per add. A rate-limited request thus costs a map lookup, not two SQL statements.
 * A crash loses at most the adds of the last batch window (milliseconds), like any write not yet committed.
 */
export class SqliteCounters implements Counters {
  readonly #select;
  readonly #upsert;
  readonly #remove;
  readonly #writes: WriteBatcher;
  /** Values read or written, most recently used last (Map order). Absent rows are cached as value 0. */
  readonly #cache = new Map<string, Counter>();
  /** Keys changed since the last commit. */
  readonly #dirty = new Set<string>();
  /**
   * The key made recent last: adding to it again needs no re-insert. Each re-insert leaves a deleted slot the
   * Map reclaims by rebuilding its table, which (the Map being long-lived) outlives the young generation; one
   * rate-limit counter hit by every request did that constantly.
   */
  #newest: string | undefined;

  constructor(db: SqliteDatabase, writes: WriteBatcher) {
    this.#writes = writes;
    db.exec(`
      CREATE TABLE IF NOT EXISTS counters (
        key TEXT PRIMARY KEY,
        value REAL NOT NULL,
        expires_at REAL
      ) WITHOUT ROWID;
    `);
    this.#select = db.prepare("SELECT value, expires_at FROM counters WHERE key = ?");
    this.#upsert = db.prepare(
      `INSERT INTO counters (key, value, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
    );
    this.#remove = db.prepare("DELETE FROM counters WHERE key = ?");
    writes.beforeCommit(() => this.#persist());
  }

  async add(key: string, amount: number, options: CounterAddOptions = {}): Promise<CounterResult> {
    if (!Number.isFinite(amount)) throw new RangeError("amount must be a finite number");
    return this.#writes.runNow("counters.add", () => {
      const counter = this.#live(key);
      // A live counter keeps its expiry; an absent or expired one starts again from 0 with the new expiry.
      const value = counter.value + amount;
      if (options.ceiling !== undefined && value > options.ceiling) return { admitted: false, value: counter.value };
      if (options.below !== undefined && counter.value >= options.below)
        return { admitted: false, value: counter.value };
      counter.value = value;
      if (!counter.exists) {
        counter.exists = true;
        counter.expiresAt = options.expiresAt ?? null;
      }
      this.#dirty.add(key);
      return { admitted: true, value };
    });
  }

  async get(key: string): Promise<number> {
    return sqlite("counters.get", () => this.#live(key).value);
  }

  async getMany(keys: string[]): Promise<Map<string, number>> {
    return sqlite("counters.getMany", () => new Map(keys.map((key) => [key, this.#live(key).value])));
  }

  async delete(key: string): Promise<void> {
    await this.#writes.run("counters.delete", () => {
      this.#remove.run(key);
      this.#cache.delete(key);
      this.#dirty.delete(key);
    });
  }

  /** The counter as it stands now (an expired or absent one reads as a fresh 0), marked recently used. */
  #live(key: string): Counter {
    const now = nowSeconds();
    let counter = this.#cache.get(key);
    if (!counter) {
      const row = this.#select.get(key) as { value: number; expires_at: number | null } | undefined;
      counter = row
        ? { value: row.value, expiresAt: row.expires_at, exists: true }
        : { value: 0, expiresAt: null, exists: false };
    } else if (key !== this.#newest) {
      // Made recent by a re-insert, unless it is the newest already (see #newest).
      this.#cache.delete(key);
    }
    if (isExpired(counter.expiresAt, now)) counter = { value: 0, expiresAt: null, exists: false };
    this.#cache.set(key, counter);
    this.#newest = key;
    if (this.#cache.size > MAX_CACHED) this.#evict();
    return counter;
  }

  /** Drops the least recently used counters that have nothing left to write (the table has their value). */
  #evict(): void {
    for (const key of this.#cache.keys()) {
      if (this.#cache.size <= MAX_CACHED * 0.9) break;
      if (!this.#dirty.has(key)) this.#cache.delete(key);
    }
  }

  /** Runs inside the batch transaction right before its commit: each changed counter's latest value. */
  #persist(): void {
    for (const key of this.#dirty) {
      const counter = this.#cache.get(key);
      if (counter?.exists) this.#upsert.run(key, counter.value, counter.expiresAt);
    }
    this.#dirty.clear();
  }
}
