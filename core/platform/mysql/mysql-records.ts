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
import type { Database, Run } from "./database.ts";

/** The columns of a row: copies of the key, index and ttl attributes, and the whole item as JSON. */
export type RecordRow = [
  pk: string,
  sk: string,
  gsi1pk: string | null,
  gsi1sk: string | null,
  ttl: number | null,
  data: string,
];

export function recordRow(item: RecordItem): RecordRow {
  return [
    item.pk,
    item.sk,
    typeof item.gsi1pk === "string" ? item.gsi1pk : null,
    typeof item.gsi1sk === "string" ? item.gsi1sk : null,
    typeof item.ttl === "number" ? item.ttl : null,
    JSON.stringify(item),
  ];
}

/** The statement that writes rows whatever is there (VALUES() rather than an alias: MariaDB has no alias form). */
export const upsertSql = (table: string, rows = 1) =>
  `INSERT INTO ${table} (pk, sk, gsi1pk, gsi1sk, ttl, data) VALUES ${Array(rows).fill("(?, ?, ?, ?, ?, ?)").join(", ")}
   ON DUPLICATE KEY UPDATE gsi1pk = VALUES(gsi1pk), gsi1sk = VALUES(gsi1sk), ttl = VALUES(ttl), data = VALUES(data)`;

/** A row read under its lock: whether one exists (expired or not) and the live item, if any. */
interface LockedRow {
  exists: boolean;
  live: RecordItem | undefined;
}

/**
 * Records in one MySQL table with the columns of the DynamoDB single table (schema.ts). Unconditional writes
 * are single statements; conditional ones read the row FOR UPDATE, check the condition in code (the rules of
 * core/store/record-rules.ts, as SQLite does) and write while holding the lock. A row found absent is created
 * with a plain INSERT, so of two concurrent creators one meets the other's key and runs again (database.ts).
 * Expired rows stay until the housekeeping pass deletes them and are invisible to every read and condition.
 */
export class MysqlRecords implements Records {
  readonly #db: Database;
  readonly #table: string;

  constructor(db: Database, table: string) {
    this.#db = db;
    this.#table = table;
  }

  async get(pk: string, sk: string): Promise<RecordItem | undefined> {
    const rows = await this.#db.run<Array<{ data: string; ttl: number | null }>>(
      "records.get",
      `SELECT data, ttl FROM ${this.#table} WHERE pk = ? AND sk = ?`,
      [pk, sk],
    );
    const row = rows[0];
    return row && !isExpired(row.ttl, nowSeconds()) ? (JSON.parse(row.data) as RecordItem) : undefined;
  }

  async put(item: RecordItem, condition?: WriteCondition): Promise<void> {
    checkItem(item);
    const row = recordRow(item);
    if (!condition) {
      await this.#db.run("records.put", upsertSql(this.#table), row);
      return;
    }
    await this.#db.transaction(
      "records.put",
      async (run) => {
        const current = await this.#lock(run, item.pk, item.sk);
        if (!conditionHolds(current.live, condition)) throw new ConditionFailedError();
        await this.#write(run, current, row);
      },
      { retryOnDuplicateKey: true },
    );
  }

  async update(pk: string, sk: string, update: RecordUpdate, condition?: WriteCondition): Promise<RecordItem> {
    checkUpdate(update);
    return this.#db.transaction("records.update", async (run) => {
      const current = await this.#lock(run, pk, sk);
      if (current.live === undefined || !conditionHolds(current.live, condition)) throw new ConditionFailedError();
      const next = applyUpdate(current.live, update);
      await this.#write(run, current, recordRow(next));
      return next;
    });
  }

  async delete(pk: string, sk: string, condition?: WriteCondition): Promise<void> {
    const sql = `DELETE FROM ${this.#table} WHERE pk = ? AND sk = ?`;
    if (!condition) {
      await this.#db.run("records.delete", sql, [pk, sk]);
      return;
    }
    await this.#db.transaction("records.delete", async (run) => {
      const current = await this.#lock(run, pk, sk);
      if (!conditionHolds(current.live, condition)) throw new ConditionFailedError();
      if (current.exists) await run(sql, [pk, sk]);
    });
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
      // Byte bounds: every key that starts with the prefix's bytes, and no other (UTF-8 never has a 0xFF byte).
      const start = Buffer.from(query.prefix);
      const end = Buffer.from(start);
      end[end.length - 1]! += 1;
      where.push(`${sortColumn} >= ?`, `${sortColumn} < ?`);
      params.push(start, end);
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
      if (!Array.isArray(after) || after.length !== orderColumns.length || !after.every((v) => typeof v === "string")) {
        throw new RangeError("invalid cursor");
      }
      const { sql, values } = afterKey(orderColumns, after as string[], descending ? "<" : ">");
      where.push(sql);
      params.push(...values);
    }
    const direction = descending ? "DESC" : "ASC";
    // One row more than the page tells whether another page follows.
    const rows = await this.#db.run<Array<{ data: string }>>(
      "records.query",
      `SELECT data FROM ${this.#table} WHERE ${where.join(" AND ")}
       ORDER BY ${orderColumns.map((column) => `${column} ${direction}`).join(", ")} LIMIT ?`,
      [...params, limit + 1],
    );
    const items = rows.slice(0, limit).map((row) => JSON.parse(row.data) as RecordItem);
    const last = items.at(-1);
    const cursor = rows.length > limit && last ? encodeCursor(orderColumns.map((column) => last[column])) : undefined;
    return { items, cursor };
  }

  /** The row under a write lock (held until the transaction ends). */
  async #lock(run: Run, pk: string, sk: string): Promise<LockedRow> {
    const rows = await run<Array<{ data: string; ttl: number | null }>>(
      `SELECT data, ttl FROM ${this.#table} WHERE pk = ? AND sk = ? FOR UPDATE`,
      [pk, sk],
    );
    const row = rows[0];
    if (!row) return { exists: false, live: undefined };
    return { exists: true, live: isExpired(row.ttl, nowSeconds()) ? undefined : (JSON.parse(row.data) as RecordItem) };
  }

  /** Replaces the locked row, or creates it with a plain INSERT when there was none (see the class comment). */
  async #write(run: Run, current: LockedRow, row: RecordRow): Promise<void> {
    if (!current.exists) {
      await run(`INSERT INTO ${this.#table} (pk, sk, gsi1pk, gsi1sk, ttl, data) VALUES (?, ?, ?, ?, ?, ?)`, row);
      return;
    }
    const [pk, sk, gsi1pk, gsi1sk, ttl, data] = row;
    await run(`UPDATE ${this.#table} SET gsi1pk = ?, gsi1sk = ?, ttl = ?, data = ? WHERE pk = ? AND sk = ?`, [
      gsi1pk,
      gsi1sk,
      ttl,
      data,
      pk,
      sk,
    ]);
  }
}

/**
 * `(a, b, c) > (x, y, z)` spelled out so the optimiser can range-scan on the first column (row comparisons
 * are not always used for ranges): a > x OR (a = x AND (b > y OR (b = y AND c > z))), with a >= x up front.
 */
function afterKey(columns: string[], values: string[], op: "<" | ">"): { sql: string; values: string[] } {
  let sql = "";
  const params: string[] = [];
  for (let i = columns.length - 1; i >= 0; i--) {
    const column = columns[i]!;
    if (sql === "") {
      sql = `${column} ${op} ?`;
      params.unshift(values[i]!);
    } else {
      sql = `${column} ${op} ? OR (${column} = ? AND (${sql}))`;
      params.unshift(values[i]!, values[i]!);
    }
  }
  return { sql: `${columns[0]} ${op}= ? AND (${sql})`, values: [values[0]!, ...params] };
}
