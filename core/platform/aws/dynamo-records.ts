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
  checkItem,
  checkQuery,
  checkUpdate,
  conditionHolds,
  isExpired,
  nowSeconds,
  pageSize,
} from "../../store/record-rules.ts";
import type { DynamoClient } from "./dynamo-client.ts";
import { Expression } from "./dynamo-expressions.ts";
import { aws, isConditionFailed } from "./errors.ts";

export const GSI1 = "gsi1";

/**
 * Records in a DynamoDB single table (pk, sk; index gsi1 on gsi1pk, gsi1sk; ttl). DynamoDB deletes expired
 * items only eventually (dynalite never), so every read, query and condition also checks `ttl` itself.
 */
export class DynamoRecords implements Records {
  readonly #client: DynamoClient;
  readonly #table: string;

  constructor(client: DynamoClient, tableName: string) {
    this.#client = client;
    this.#table = tableName;
  }

  async get(pk: string, sk: string): Promise<RecordItem | undefined> {
    const out = await aws("records.get", () =>
      this.#client.getItem({ TableName: this.#table, Key: { pk, sk }, ConsistentRead: true }),
    );
    const item = out.Item as RecordItem | undefined;
    return item && !isExpired(item.ttl, nowSeconds()) ? item : undefined;
  }

  async put(item: RecordItem, condition?: WriteCondition): Promise<void> {
    checkItem(item);
    const expression = new Expression();
    const conditionExpression = expression.condition(condition, nowSeconds());
    await this.#conditional("records.put", () =>
      this.#client.putItem({
        TableName: this.#table,
        Item: item,
        ConditionExpression: conditionExpression,
        ...expression.attributes(),
      }),
    );
  }

  async update(pk: string, sk: string, update: RecordUpdate, condition?: WriteCondition): Promise<RecordItem> {
    checkUpdate(update);
    const set = Object.entries(update.set ?? {}).filter(([, value]) => value !== undefined);
    // Setting undefined removes, as it does in JSON (and in the SQLite adapter).
    const remove = [
      ...(update.remove ?? []),
      ...Object.entries(update.set ?? {})
        .filter(([, value]) => value === undefined)
        .map(([name]) => name),
    ];
    if (set.length === 0 && remove.length === 0) {
      // DynamoDB has no empty update; nothing is written, so checking a consistent read is just as exact.
      const current = await this.get(pk, sk);
      if (current === undefined || !conditionHolds(current, condition)) throw new ConditionFailedError();
      return current;
    }
    const now = nowSeconds();
    const expression = new Expression();
    const clauses: string[] = [];
    if (set.length > 0) {
      clauses.push(
        `SET ${set.map(([name, value]) => `${expression.name(name)} = ${expression.value(value)}`).join(", ")}`,
      );
    }
    if (remove.length > 0) clauses.push(`REMOVE ${remove.map((name) => expression.name(name)).join(", ")}`);
    const conditions = [expression.live(now), expression.condition(condition, now)].filter(Boolean);
    const out = await this.#conditional("records.update", () =>
      this.#client.updateItem({
        TableName: this.#table,
        Key: { pk, sk },
        UpdateExpression: clauses.join(" "),
        ConditionExpression: conditions.join(" AND "),
        ReturnValues: "ALL_NEW",
        ...expression.attributes(),
      }),
    );
    return out.Attributes as RecordItem;
  }

  async delete(pk: string, sk: string, condition?: WriteCondition): Promise<void> {
    const expression = new Expression();
    const conditionExpression = expression.condition(condition, nowSeconds());
    await this.#conditional("records.delete", () =>
      this.#client.deleteItem({
        TableName: this.#table,
        Key: { pk, sk },
        ConditionExpression: conditionExpression,
        ...expression.attributes(),
      }),
    );
  }

  async query(query: RecordQuery): Promise<Page<RecordItem>> {
    checkQuery(query);
    const limit = pageSize(query.limit);
    const onIndex = query.index === GSI1;
    const expression = new Expression();
    const partition = expression.name(onIndex ? "gsi1pk" : "pk");
    // Named only when used: DynamoDB rejects placeholders an expression does not mention.
    const sort = () => expression.name(onIndex ? "gsi1sk" : "sk");
    let keyCondition = `${partition} = ${expression.value(query.partition)}`;
    if (query.prefix) keyCondition += ` AND begins_with(${sort()}, ${expression.value(query.prefix)})`;
    else if (query.from !== undefined && query.to !== undefined) {
      keyCondition += ` AND ${sort()} BETWEEN ${expression.value(query.from)} AND ${expression.value(query.to)}`;
    } else if (query.from !== undefined) keyCondition += ` AND ${sort()} >= ${expression.value(query.from)}`;
    else if (query.to !== undefined) keyCondition += ` AND ${sort()} <= ${expression.value(query.to)}`;
    const ttl = expression.name("ttl");
    const filter = `attribute_not_exists(${ttl}) OR ${ttl} >= ${expression.value(nowSeconds())}`;

    const items: RecordItem[] = [];
    let startKey = query.cursor === undefined ? undefined : decodeCursor<Record<string, unknown>>(query.cursor);
    // Limit counts items before the ttl filter drops expired ones, so keep reading until the page is full.
    do {
      const out = await aws("records.query", () =>
        this.#client.query({
          TableName: this.#table,
          IndexName: onIndex ? GSI1 : undefined,
          // Strongly consistent reads are not available on a global secondary index.
          ConsistentRead: onIndex ? undefined : true,
          KeyConditionExpression: keyCondition,
          FilterExpression: filter,
          ScanIndexForward: query.order !== "desc",
          Limit: limit - items.length,
          ExclusiveStartKey: startKey,
          ...expression.attributes(),
        }),
      );
      items.push(...((out.Items ?? []) as RecordItem[]));
      startKey = out.LastEvaluatedKey;
    } while (items.length < limit && startKey);
    return { items, cursor: startKey ? encodeCursor(startKey) : undefined };
  }

  async #conditional<T>(what: string, write: () => Promise<T>): Promise<T> {
    try {
      return await aws(what, write);
    } catch (error) {
      if (isConditionFailed(error)) throw new ConditionFailedError();
      throw error;
    }
  }
}
