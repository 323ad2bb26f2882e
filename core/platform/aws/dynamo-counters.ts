import { type CounterAddOptions, type CounterResult, type Counters, StoreUnavailableError } from "../../store/ports.ts";
import { isExpired, nowSeconds } from "../../store/record-rules.ts";
import type { DynamoClient } from "./dynamo-client.ts";
import { Expression } from "./dynamo-expressions.ts";
import { aws, isConditionFailed } from "./errors.ts";

/** Counters live in the records table under their own key space; `ttl` lets DynamoDB reap expired ones. */
const counterKey = (key: string) => ({ pk: `#counter#${key}`, sk: "#counter" });
/** Rounds of "update, else reset" before giving up; each lost round means another writer made progress. */
const MAX_ROUNDS = 10;
const BATCH_GET_MAX = 100;

interface CounterItem {
  value: number;
  ttl?: number;
}

/**
 * Counters with single-item conditional writes only (dynalite has no transactions):
 * 1. ADD to a live counter, conditioned on the ceiling and `below`; this is the common path and one round trip.
 * 2. If that fails, a consistent read tells why: refused by those (answer not admitted), or absent/expired.
 * 3. Absent or expired: put a fresh counter, conditioned on it still being absent or expired.
 * A lost race in step 3 (or a counter that appeared after step 1) goes round again, so adds stay exact.
 */
export class DynamoCounters implements Counters {
  readonly #client: DynamoClient;
  readonly #table: string;

  constructor(client: DynamoClient, tableName: string) {
    this.#client = client;
    this.#table = tableName;
  }

  async add(key: string, amount: number, options: CounterAddOptions = {}): Promise<CounterResult> {
    if (!Number.isFinite(amount)) throw new RangeError("amount must be a finite number");
    const { expiresAt } = options;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const added = await this.#addToLive(key, amount, options);
      if (added !== undefined) return { admitted: true, value: added };

      const current = await this.#readLive(key);
      if (current !== undefined) {
        if (refuses(options, current.value, amount)) return { admitted: false, value: current.value };
        continue; // it came to life after step 1
      }
      if (refuses(options, 0, amount)) return { admitted: false, value: 0 };
      if (await this.#restart(key, amount, expiresAt)) return { admitted: true, value: amount };
    }
    throw new StoreUnavailableError(`counters.add: too much contention on ${key}`);
  }

  async get(key: string): Promise<number> {
    return (await this.#readLive(key))?.value ?? 0;
  }

  async getMany(keys: string[]): Promise<Map<string, number>> {
    const values = new Map(keys.map((key) => [key, 0]));
    const unique = [...values.keys()];
    for (let start = 0; start < unique.length; start += BATCH_GET_MAX) {
      let pending: Record<string, any>[] | undefined = unique.slice(start, start + BATCH_GET_MAX).map(counterKey);
      // BatchGet may return part of the batch under load; ask again for the rest.
      for (let attempt = 0; pending && pending.length > 0; attempt++) {
        if (attempt >= MAX_ROUNDS) throw new StoreUnavailableError("counters.getMany: keys left unprocessed");
        const keysToRead: Record<string, any>[] = pending;
        const out = await aws("counters.getMany", () =>
          this.#client.batchGetItem({ RequestItems: { [this.#table]: { Keys: keysToRead, ConsistentRead: true } } }),
        );
        const now = nowSeconds();
        for (const item of out.Responses?.[this.#table] ?? []) {
          if (!isExpired(item.ttl, now)) values.set((item.pk as string).slice("#counter#".length), item.value);
        }
        pending = out.UnprocessedKeys?.[this.#table]?.Keys;
        if (pending?.length) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
      }
    }
    return values;
  }

  async delete(key: string): Promise<void> {
    await aws("counters.delete", () => this.#client.deleteItem({ TableName: this.#table, Key: counterKey(key) }));
  }

  /** The new value, or undefined when the counter is absent, expired or refuses the add (ceiling, below). */
  async #addToLive(key: string, amount: number, options: CounterAddOptions): Promise<number | undefined> {
    const expression = new Expression();
    const value = expression.name("value");
    const conditions = [expression.live(nowSeconds())];
    if (options.ceiling !== undefined) conditions.push(`${value} <= ${expression.value(options.ceiling - amount)}`);
    if (options.below !== undefined) conditions.push(`${value} < ${expression.value(options.below)}`);
    try {
      const out = await aws("counters.add", () =>
        this.#client.updateItem({
          TableName: this.#table,
          Key: counterKey(key),
          UpdateExpression: `ADD ${value} ${expression.value(amount)}`,
          ConditionExpression: conditions.join(" AND "),
          ReturnValues: "UPDATED_NEW",
          ...expression.attributes(),
        }),
      );
      return out.Attributes?.value as number;
    } catch (error) {
      if (isConditionFailed(error)) return undefined;
      throw error;
    }
  }

  /** Starts the counter again at `amount`; false when another writer got there first. */
  async #restart(key: string, amount: number, expiresAt: number | undefined): Promise<boolean> {
    const expression = new Expression();
    const condition = expression.absent(nowSeconds());
    try {
      await aws("counters.add", () =>
        this.#client.putItem({
          TableName: this.#table,
          Item: { ...counterKey(key), value: amount, ...(expiresAt !== undefined ? { ttl: expiresAt } : {}) },
          ConditionExpression: condition,
          ...expression.attributes(),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
  }

  async #readLive(key: string): Promise<CounterItem | undefined> {
    const out = await aws("counters.get", () =>
      this.#client.getItem({ TableName: this.#table, Key: counterKey(key), ConsistentRead: true }),
    );
    const item = out.Item as CounterItem | undefined;
    return item && !isExpired(item.ttl, nowSeconds()) ? item : undefined;
  }
}

/** Whether the add's conditions refuse `amount` on a counter at `current`. */
function refuses(options: CounterAddOptions, current: number, amount: number): boolean {
  if (options.ceiling !== undefined && current + amount > options.ceiling) return true;
  return options.below !== undefined && current >= options.below;
}
