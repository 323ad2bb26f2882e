import type { CounterAddOptions, CounterResult, Counters } from "../../store/ports.ts";
import { isExpired, nowSeconds } from "../../store/record-rules.ts";
import type { Database } from "./database.ts";

/** Keys per statement of getMany. */
const GET_MANY_BATCH = 100;

/**
 * Counters in one MySQL table (k, value, expires_at). An add reads the row FOR UPDATE, decides in code (the
 * ceiling, `below`, an expired counter starting again from 0) and writes while holding the row lock, so
 * concurrent adds from any number of processes are applied one after another and never pass a ceiling.
 * A counter not there yet is created with a plain INSERT: of two first adds, one meets the other's key and
 * runs again, then finds the row and waits for its lock (database.ts).
 */
export class MysqlCounters implements Counters {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  add(key: string, amount: number, options: CounterAddOptions = {}): Promise<CounterResult> {
    if (!Number.isFinite(amount)) return Promise.reject(new RangeError("a counter amount must be a finite number"));
    return this.#db.transaction(
      "counters.add",
      async (run) => {
        const rows = await run<Array<{ value: number; expires_at: number | null }>>(
          "SELECT value, expires_at FROM counters WHERE k = ? FOR UPDATE",
          [key],
        );
        const row = rows[0];
        const live = row !== undefined && !isExpired(row.expires_at, nowSeconds());
        const current = live ? row.value : 0;
        const refused =
          (options.ceiling !== undefined && current + amount > options.ceiling) ||
          (options.below !== undefined && !(current < options.below));
        if (refused) return { admitted: false, value: current };
        const value = current + amount;
        // A live counter keeps its expiry; a new or expired one takes the one given.
        const expiresAt = live ? row.expires_at : (options.expiresAt ?? null);
        if (row) await run("UPDATE counters SET value = ?, expires_at = ? WHERE k = ?", [value, expiresAt, key]);
        else await run("INSERT INTO counters (k, value, expires_at) VALUES (?, ?, ?)", [key, value, expiresAt]);
        return { admitted: true, value };
      },
      { retryOnDuplicateKey: true },
    );
  }

  async get(key: string): Promise<number> {
    return (await this.getMany([key])).get(key) ?? 0;
  }

  async getMany(keys: string[]): Promise<Map<string, number>> {
    const values = new Map<string, number>(keys.map((key) => [key, 0]));
    const unique = [...values.keys()];
    const now = nowSeconds();
    for (let start = 0; start < unique.length; start += GET_MANY_BATCH) {
      const batch = unique.slice(start, start + GET_MANY_BATCH);
      const rows = await this.#db.run<Array<{ k: Buffer; value: number; expires_at: number | null }>>(
        "counters.getMany",
        `SELECT k, value, expires_at FROM counters WHERE k IN (${batch.map(() => "?").join(", ")})`,
        batch,
      );
      for (const row of rows) {
        if (!isExpired(row.expires_at, now)) values.set(row.k.toString("utf8"), row.value);
      }
    }
    return values;
  }

  async delete(key: string): Promise<void> {
    await this.#db.run("counters.delete", "DELETE FROM counters WHERE k = ?", [key]);
  }
}
