import { RecordsLogSink } from "../../logs/records-log-sink.ts";
import { type Blobs, type RecordItem, type Records, StoreUnavailableError } from "../../store/ports.ts";
import { checkItem, isExpired, nowSeconds } from "../../store/record-rules.ts";
import type { DynamoClient } from "./dynamo-client.ts";
import { aws } from "./errors.ts";

/** DynamoDB's limits: puts per BatchWriteItem, keys per BatchGetItem. */
const BATCH_WRITE_MAX = 25;
const BATCH_GET_MAX = 100;
/** Rounds for the requests a batch call leaves unprocessed (throttling), with exponential back-off. */
const MAX_ROUNDS = 6;

/**
 * The log sink of the AWS platform: RecordsLogSink's layout (a log's record and its index entries, each its own
 * item: no transaction, which dynalite lacks), written with BatchWriteItem (one call for a log's 10 to 25 items
 * instead of one PutItem each) and read back with BatchGetItem once a search knows which logs it answers.
 */
export class DynamoLogSink extends RecordsLogSink {
  readonly #client: DynamoClient;
  readonly #table: string;

  constructor(records: Records, blobs: Blobs, client: DynamoClient, tableName: string) {
    super(records, blobs);
    this.#client = client;
    this.#table = tableName;
  }

  protected override async putItems(items: RecordItem[]): Promise<void> {
    for (const item of items) checkItem(item);
    const chunks: RecordItem[][] = [];
    for (let start = 0; start < items.length; start += BATCH_WRITE_MAX) {
      chunks.push(items.slice(start, start + BATCH_WRITE_MAX));
    }
    await Promise.all(chunks.map((chunk) => this.#writeChunk(chunk)));
  }

  async #writeChunk(items: RecordItem[]): Promise<void> {
    let pending: Array<{ PutRequest: { Item: Record<string, unknown> } }> = items.map((item) => ({
      PutRequest: { Item: item },
    }));
    for (let round = 0; pending.length > 0; round++) {
      if (round >= MAX_ROUNDS) throw new StoreUnavailableError("logs.write: items left unprocessed");
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** round));
      const requests = pending;
      const out = await aws("logs.write", () =>
        this.#client.batchWriteItem({ RequestItems: { [this.#table]: requests } }),
      );
      pending = out.UnprocessedItems[this.#table] ?? [];
    }
  }

  protected override async loadRecords(
    keys: Array<{ pk: string; sk: string }>,
  ): Promise<Array<RecordItem | undefined>> {
    const found = new Map<string, RecordItem>();
    for (let start = 0; start < keys.length; start += BATCH_GET_MAX) {
      let pending: Array<Record<string, unknown>> = keys.slice(start, start + BATCH_GET_MAX);
      for (let round = 0; pending.length > 0; round++) {
        if (round >= MAX_ROUNDS) throw new StoreUnavailableError("logs.search: keys left unprocessed");
        if (round > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** round));
        const requested = pending;
        const out = await aws("logs.search", () =>
          this.#client.batchGetItem({ RequestItems: { [this.#table]: { Keys: requested, ConsistentRead: true } } }),
        );
        const now = nowSeconds();
        for (const item of out.Responses[this.#table] ?? []) {
          if (!isExpired(item.ttl, now)) found.set(item.pk as string, item as RecordItem);
        }
        pending = out.UnprocessedKeys[this.#table]?.Keys ?? [];
      }
    }
    return keys.map((key) => found.get(key.pk));
  }
}
