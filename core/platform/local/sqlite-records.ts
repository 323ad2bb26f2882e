import { decodeCursor, encodeCursor } from "../../store/cursor.ts";
import {
  ConditionFailedError,
  type Page,
  type RecordItem,
  type RecordQuery,
  type Records,
  type RecordUpdate,
  type WriteCondition,
} from "../../store/ports.ts";
import {
  applyUpdate,
  checkItem,
  checkQuery,
  checkUpdate,
  conditionHolds,
  isExpired,
  nowSeconds,
  pageSize,
} from "../../store/record-rules.ts";
import type { WriteBatcher } from "./write-batcher.ts";
import { type SqliteDatabase, type SqliteStatement, sqlite } from "./sqlite.ts";

/** An item as its row stores it: the whole item as JSON, and copies of the key, index and ttl attributes. */
export interface StoredRow {
  pk: string;
  sk: string;
  gsi1pk: string | null;
  gsi1sk: string | null;
  ttl: number | null;
  data: string;
}

export function storedRow(item: RecordItem): StoredRow {
  return {
    pk: item.pk,
    sk: item.sk,
    gsi1pk: typeof item.gsi1pk === "string" ? item.gsi1pk : null,
    gsi1sk: typeof item.gsi1sk === "string" ? item.gsi1sk : null,
    ttl: typeof item.ttl === "number" ? item.ttl : null,
    data: JSON.stringify(item),
  };
}

/**
 * Records in one SQLite table with the columns of the DynamoDB single table. The whole item is kept as JSON
 * in `data`; the key, index and ttl columns are copies that SQL can filter and sort on. Expired rows stay
 * until overwritten but are invisible to every read and condition. A rowid table (not WITHOUT ROWID): items
 * such as request logs are kilobytes, and large rows insert faster in a rowid table.
 */
export class SqliteRecords implements Records {
  readonly #db: SqliteDatabase;
  readonly #statements = new Map<string, SqliteStatement>();
  readonly #put: (row: StoredRow, condition: WriteCondition | undefined) => void;
  readonly #update: (pk: string, sk: string, update: RecordUpdate, condition?: WriteCondition) => RecordItem;
  readonly #delete: (pk: string, sk: string, condition: WriteCondition | undefined) => void;

  /** Writes go through the database's shared batcher (one commit per event-loop turn). */
  readonly #writes: WriteBatcher;

  constructor(db: SqliteDatabase, writes: WriteBatcher) {
    this.#writes = writes;
    this.#db = db;
    db.exec(`
      CREATE TABLE IF NOT EXISTS records (
        pk TEXT NOT NULL,
        sk TEXT NOT NULL,
        gsi1pk TEXT,
        gsi1sk TEXT,
        ttl REAL,
        data TEXT NOT NULL,
        PRIMARY KEY (pk, sk)
      );
      CREATE INDEX IF NOT EXISTS records_gsi1 ON records (gsi1pk, gsi1sk);
    `);
    // These run inside the batch transaction (write-batcher.ts): a conditional write reads and writes with no
    // other writer in between, and a failing statement rolls back only itself.
    const put = (row: StoredRow, condition: WriteCondition | undefined) => {
      if (condition && !conditionHolds(this.#readLive(row.pk, row.sk), condition)) throw new ConditionFailedError();
      this.#writeRow(row);
    };
    const update = (pk: string, sk: string, change: RecordUpdate, condition?: WriteCondition) => {
      const current = this.#readLive(pk, sk);
      if (current === undefined || !conditionHolds(current, condition)) throw new ConditionFailedError();
      const next = applyUpdate(current, change);
      this.#writeRow(storedRow(next));
      return next;
    };
    const remove = (pk: string, sk: string, condition: WriteCondition | undefined) => {
      if (condition && !conditionHolds(this.#readLive(pk, sk), condition)) throw new ConditionFailedError();
      this.#statement("DELETE FROM records WHERE pk = ? AND sk = ?").run(pk, sk);
    };
    this.#put = (row, condition) => put(row, condition);
    this.#update = (pk, sk, change, condition) => update(pk, sk, change, condition);
    this.#delete = (pk, sk, condition) => remove(pk, sk, condition);
  }

  async get(pk: string, sk: string): Promise<RecordItem | undefined> {
    return sqlite("records.get", () => this.#readLive(pk, sk));
  }

  async put(item: RecordItem, condition?: WriteCondition): Promise<void> {
    checkItem(item);
    await this.putRow(storedRow(item), condition);
  }

  /** put() of an item serialised already (checked by the caller): the storage thread's writes. */
  async putRow(row: StoredRow, condition?: WriteCondition): Promise<void> {
    await this.#writes.run("records.put", () => this.#put(row, condition));
  }

  async update(pk: string, sk: string, update: RecordUpdate, condition?: WriteCondition): Promise<RecordItem> {
    checkUpdate(update);
    return this.#writes.run("records.update", () => this.#update(pk, sk, update, condition));
  }

  async delete(pk: string, sk: string, condition?: WriteCondition): Promise<void> {
    await this.#writes.run("records.delete", () => this.#delete(pk, sk, condition));
  }

  async query(query: RecordQuery): Promise<Page<RecordItem>> {
    checkQuery(query);
    const limit = pageSize(query.limit);
    const onIndex = query.index === "gsi1";
    const partitionColumn = onIndex ? "gsi1pk" : "pk";
    const sortColumn = onIndex ? "gsi1sk" : "sk";
    // Index entries tie on gsi1sk, so the table key breaks ties to give cursors a total order.
    const orderColumns = onIndex ? ["gsi1sk", "pk", "sk"] : ["sk"];
    const descending = query.order === "desc";

    const where = [`${partitionColumn} = ?`, `${sortColumn} IS NOT NULL`, "(ttl IS NULL OR ttl >= ?)"];
    const params: unknown[] = [query.partition, nowSeconds()];
    if (query.prefix) {
      // The range lets SQLite use the index; substr keeps the match exact whatever the last code point is.
      where.push(`${sortColumn} >= ?`, `substr(${sortColumn}, 1, length(?)) = ?`);
      params.push(query.prefix, query.prefix, query.prefix);
      const end = prefixEnd(query.prefix);
      if (end !== undefined) {
        where.push(`${sortColumn} < ?`);
        params.push(end);
      }
    }
    if (query.from !== undefined) {
      where.push(`${sortColumn} >= ?`);
      params.push(query.from);
    }
    if (query.to !== undefined) {
      where.push(`${sortColumn} <= ?`);
      params.push(query.to);
    }
    if (query.cursor !== undefined) {
      const after = decodeCursor<unknown[]>(query.cursor);
      if (!Array.isArray(after) || after.length !== orderColumns.length) throw new RangeError("invalid cursor");
      where.push(`(${orderColumns.join(", ")}) ${descending ? "<" : ">"} (${orderColumns.map(() => "?").join(", ")})`);
      params.push(...after);
    }
    const direction = descending ? "DESC" : "ASC";
    const sql = `SELECT data FROM records WHERE ${where.join(" AND ")}
      ORDER BY ${orderColumns.map((column) => `${column} ${direction}`).join(", ")} LIMIT ?`;
    // One row more than the page tells whether another page follows.
    const rows = sqlite("records.query", () => this.#statement(sql).all(...params, limit + 1) as { data: string }[]);
    const items = rows.slice(0, limit).map((row) => JSON.parse(row.data) as RecordItem);
    const last = items.at(-1);
    const cursor = rows.length > limit && last ? encodeCursor(orderColumns.map((column) => last[column])) : undefined;
    return { items, cursor };
  }

  #readLive(pk: string, sk: string): RecordItem | undefined {
    const row = this.#statement("SELECT data, ttl FROM records WHERE pk = ? AND sk = ?").get(pk, sk) as
      | { data: string; ttl: number | null }
      | undefined;
    if (!row || isExpired(row.ttl, nowSeconds())) return undefined;
    return JSON.parse(row.data) as RecordItem;
  }

  #writeRow(row: StoredRow): void {
    this.#statement(
      `INSERT INTO records (pk, sk, gsi1pk, gsi1sk, ttl, data) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (pk, sk) DO UPDATE SET gsi1pk = excluded.gsi1pk, gsi1sk = excluded.gsi1sk,
         ttl = excluded.ttl, data = excluded.data`,
    ).run(row.pk, row.sk, row.gsi1pk, row.gsi1sk, row.ttl, row.data);
  }

  /** Query shapes are few (index, bounds, cursor, order), so prepared statements are cached by SQL. */
  #statement(sql: string): SqliteStatement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare<unknown[]>(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

/** The smallest string above every string that starts with `prefix` (undefined when there is none). */
function prefixEnd(prefix: string): string | undefined {
  const codePoints = [...prefix];
  const last = codePoints.pop()!.codePointAt(0)!;
  if (last >= 0x10ffff) return undefined;
  // Skip the surrogate range: those are not code points of their own in UTF-8.
  const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
  return codePoints.join("") + String.fromCodePoint(next);
}
