import type { CounterAddOptions, CounterResult, Counters } from "../../store/ports.ts";
import { isExpired, nowSeconds } from "../../store/record-rules.ts";
import type { WriteBatcher } from "./write-batcher.ts";
import { type SqliteDatabase, sqlite } from "./sqlite.ts";

interface CounterRow {
  value: number;
  expires_at: number | null;
}

/**
 * Counters in a SQLite table. better-sqlite3 is synchronous and each add runs inside the batch's IMMEDIATE
 * transaction, so the ceiling check and the write are exact even across processes sharing the file.
 */
export class SqliteCounters implements Counters {
  readonly #select;
  readonly #upsert;
  readonly #remove;
  readonly #add: (key: string, amount: number, options: CounterAddOptions) => CounterResult;

  /** Writes go through the database's shared batcher (one commit per event-loop turn). */
  readonly #writes: WriteBatcher;

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
    // Runs inside the batch transaction (write-batcher.ts): the check and the write see no other writer between.
    const add = (key: string, amount: number, options: CounterAddOptions): CounterResult => {
      const row = this.#live(key);
      // A live counter keeps its expiry; an absent or expired one starts again from 0 with the new expiry.
      const current = row?.value ?? 0;
      const expiresAt = row ? row.expires_at : (options.expiresAt ?? null);
      const value = current + amount;
      if (options.ceiling !== undefined && value > options.ceiling) return { admitted: false, value: current };
      this.#upsert.run(key, value, expiresAt);
      return { admitted: true, value };
    };
    this.#add = (key, amount, options) => add(key, amount, options);
  }

  async add(key: string, amount: number, options: CounterAddOptions = {}): Promise<CounterResult> {
    if (!Number.isFinite(amount)) throw new RangeError("amount must be a finite number");
    // The new value decides the request in flight: answer before the batch commits (write-batcher.ts).
    return this.#writes.runNow("counters.add", () => this.#add(key, amount, options));
  }

  async get(key: string): Promise<number> {
    return sqlite("counters.get", () => this.#live(key)?.value ?? 0);
  }

  async getMany(keys: string[]): Promise<Map<string, number>> {
    return sqlite("counters.getMany", () => new Map(keys.map((key) => [key, this.#live(key)?.value ?? 0])));
  }

  async delete(key: string): Promise<void> {
    sqlite("counters.delete", () => this.#remove.run(key));
  }

  #live(key: string): CounterRow | undefined {
    const row = this.#select.get(key) as CounterRow | undefined;
    return row && !isExpired(row.expires_at, nowSeconds()) ? row : undefined;
  }
}
