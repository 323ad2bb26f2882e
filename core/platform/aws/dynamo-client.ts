import { type AttributeMap, marshallItem, unmarshallItem } from "./dynamo-values.ts";
import { DynamoHttp, type DynamoHttpOptions } from "./dynamo-http.ts";

/**
 * The DynamoDB operations the Records and Counters adapters use, taking and returning plain JavaScript values
 * (what lib-dynamodb's document client did): keys, items and expression values are marshalled on the way in,
 * items on the way out. Field names are DynamoDB's own, so each call reads like the API reference.
 */

type Item = Record<string, any>;

interface Expressions {
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
}

export interface GetItemInput {
  TableName: string;
  Key: Item;
  ConsistentRead?: boolean;
}

export interface PutItemInput extends Expressions {
  TableName: string;
  Item: Item;
}

export interface UpdateItemInput extends Expressions {
  TableName: string;
  Key: Item;
  UpdateExpression: string;
  ReturnValues?: "NONE" | "ALL_OLD" | "UPDATED_OLD" | "ALL_NEW" | "UPDATED_NEW";
}

export interface DeleteItemInput extends Expressions {
  TableName: string;
  Key: Item;
}

export interface QueryInput {
  TableName: string;
  IndexName?: string;
  ConsistentRead?: boolean;
  KeyConditionExpression: string;
  FilterExpression?: string;
  ScanIndexForward?: boolean;
  Limit?: number;
  ExclusiveStartKey?: Item;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
}

export interface BatchWriteInput {
  RequestItems: Record<string, Array<{ PutRequest: { Item: Item } }>>;
}

export interface BatchGetInput {
  RequestItems: Record<string, { Keys: Item[]; ConsistentRead?: boolean }>;
}

export class DynamoClient {
  readonly #http: DynamoHttp;

  constructor(options: DynamoHttpOptions = {}) {
    this.#http = new DynamoHttp(options);
  }

  async getItem(input: GetItemInput): Promise<{ Item?: Item }> {
    const out = await this.#http.call<{ Item?: AttributeMap }>("GetItem", { ...input, Key: marshallItem(input.Key) });
    return { Item: fromWire(out.Item) };
  }

  async putItem(input: PutItemInput): Promise<void> {
    await this.#http.call("PutItem", { ...withValues(input), Item: marshallItem(input.Item) });
  }

  async updateItem(input: UpdateItemInput): Promise<{ Attributes?: Item }> {
    const out = await this.#http.call<{ Attributes?: AttributeMap }>("UpdateItem", {
      ...withValues(input),
      Key: marshallItem(input.Key),
    });
    return { Attributes: fromWire(out.Attributes) };
  }

  async deleteItem(input: DeleteItemInput): Promise<void> {
    await this.#http.call("DeleteItem", { ...withValues(input), Key: marshallItem(input.Key) });
  }

  async query(input: QueryInput): Promise<{ Items: Item[]; LastEvaluatedKey?: Item }> {
    const out = await this.#http.call<{ Items?: AttributeMap[]; LastEvaluatedKey?: AttributeMap }>("Query", {
      ...withValues(input),
      ExclusiveStartKey: input.ExclusiveStartKey && marshallItem(input.ExclusiveStartKey),
    });
    return { Items: (out.Items ?? []).map(unmarshallItem), LastEvaluatedKey: fromWire(out.LastEvaluatedKey) };
  }

  /** Responses and the keys DynamoDB left unprocessed (to ask again), per table. */
  async batchGetItem(
    input: BatchGetInput,
  ): Promise<{ Responses: Record<string, Item[]>; UnprocessedKeys: Record<string, { Keys: Item[] }> }> {
    const requestItems = Object.fromEntries(
      Object.entries(input.RequestItems).map(([table, request]) => [
        table,
        { ...request, Keys: request.Keys.map(marshallItem) },
      ]),
    );
    const out = await this.#http.call<{
      Responses?: Record<string, AttributeMap[]>;
      UnprocessedKeys?: Record<string, { Keys: AttributeMap[] }>;
    }>("BatchGetItem", { RequestItems: requestItems });
    const responses: Record<string, Item[]> = {};
    for (const [table, items] of Object.entries(out.Responses ?? {})) responses[table] = items.map(unmarshallItem);
    const unprocessed: Record<string, { Keys: Item[] }> = {};
    for (const [table, request] of Object.entries(out.UnprocessedKeys ?? {})) {
      unprocessed[table] = { Keys: request.Keys.map(unmarshallItem) };
    }
    return { Responses: responses, UnprocessedKeys: unprocessed };
  }

  /** Puts (each a single-item write, not a transaction); answers the requests DynamoDB left unprocessed. */
  async batchWriteItem(
    input: BatchWriteInput,
  ): Promise<{ UnprocessedItems: Record<string, Array<{ PutRequest: { Item: Item } }>> }> {
    const requestItems = Object.fromEntries(
      Object.entries(input.RequestItems).map(([table, requests]) => [
        table,
        requests.map(({ PutRequest }) => ({ PutRequest: { Item: marshallItem(PutRequest.Item) } })),
      ]),
    );
    const out = await this.#http.call<{
      UnprocessedItems?: Record<string, Array<{ PutRequest?: { Item: AttributeMap } }>>;
    }>("BatchWriteItem", { RequestItems: requestItems });
    const unprocessed: Record<string, Array<{ PutRequest: { Item: Item } }>> = {};
    for (const [table, requests] of Object.entries(out.UnprocessedItems ?? {})) {
      unprocessed[table] = requests.flatMap((request) =>
        request.PutRequest ? [{ PutRequest: { Item: unmarshallItem(request.PutRequest.Item) } }] : [],
      );
    }
    return { UnprocessedItems: unprocessed };
  }

  /** Connections belong to Node's shared fetch pool; nothing is held per client. */
  destroy(): void {}
}

/** The input with its expression values marshalled (the other fields are already wire format). */
function withValues(input: { ExpressionAttributeValues?: Item }): object {
  return input.ExpressionAttributeValues
    ? { ...input, ExpressionAttributeValues: marshallItem(input.ExpressionAttributeValues) }
    : input;
}

const fromWire = (item: AttributeMap | undefined) => (item ? unmarshallItem(item) : undefined);
