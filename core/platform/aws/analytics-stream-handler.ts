import { AnalyticsBatchCounter, type LogBatchEntry } from "../../observe/analytics/log-batch.ts";
import type { RequestLog } from "../../observe/logs/log-record.ts";
import type { Counters, Records } from "../../store/ports.ts";
import { createAwsStores } from "./aws-stores.ts";
import { type AttributeMap, unmarshallItem } from "./dynamo-values.ts";

/**
 * The analytics stream worker (functions/workers/analytics-stream.ts, subscribed in infra/workers.ts): on AWS
 * request logs are counted into the analytics aggregates from the table's DynamoDB stream (NEW_IMAGE), a
 * batch at a time, instead of on the request path. Only INSERTs of request-log items (pk `LOG#<id>`, sk `LOG`,
 * see core/observe/logs/request-logger.ts) count: a log is inserted once, so a log rewritten or expiring (MODIFY,
 * REMOVE) is never counted again. The subscription's filter already drops other records; this checks again.
 *
 * The batch goes to AnalyticsBatchCounter (core/observe/analytics/log-batch.ts), which writes each distinct counter
 * once per batch and makes a retried batch complete the failed attempt instead of counting it twice. When it
 * cannot finish, the whole batch is reported as a partial batch failure at its first record (DynamoDB stream
 * event sources with ReportBatchItemFailures then deliver the batch again from that record, so the retry has
 * the same first record and finds the failed attempt's journal).
 */

/** A DynamoDB stream record as Lambda delivers it (the fields used here). */
export interface DynamoStreamRecord {
  eventID?: string;
  eventName?: "INSERT" | "MODIFY" | "REMOVE";
  eventSource?: string;
  dynamodb?: {
    Keys?: AttributeMap;
    NewImage?: AttributeMap;
    OldImage?: AttributeMap;
    SequenceNumber?: string;
    SizeBytes?: number;
    StreamViewType?: string;
    ApproximateCreationDateTime?: number;
  };
}

export interface DynamoStreamEvent {
  Records: DynamoStreamRecord[];
}

/** The partial batch response of stream event sources: the sequence number to resume from. */
export interface StreamBatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

export type AnalyticsStreamHandler = (
  event: DynamoStreamEvent,
  context?: { getRemainingTimeInMillis?(): number },
) => Promise<StreamBatchResponse>;

/** Time kept back from the Lambda's deadline for saving the retry journal and answering. */
const DEADLINE_MARGIN_MS = 5_000;

export function createAnalyticsStreamHandler(
  init: () => Promise<{ counters: Counters; records: Records }>,
  options: { retryDelaysMs?: number[] } = {},
): AnalyticsStreamHandler {
  let counter: Promise<AnalyticsBatchCounter> | undefined;
  const counterOf = () => {
    counter ??= init()
      .then((stores) => new AnalyticsBatchCounter(stores))
      .catch((error: unknown) => {
        counter = undefined; // a failed start is retried by the next batch
        throw error;
      });
    return counter;
  };

  return async (event, context) => {
    const entries: LogBatchEntry[] = [];
    for (const record of event.Records ?? []) {
      const log = requestLogOf(record);
      if (log) entries.push({ sequence: record.dynamodb!.SequenceNumber!, log });
    }
    if (entries.length === 0) return { batchItemFailures: [] };
    const first = event.Records[0]!;
    const sequence = first.dynamodb?.SequenceNumber;
    if (!sequence) throw new Error("a DynamoDB stream record without a SequenceNumber");
    const remaining = context?.getRemainingTimeInMillis?.();
    const result = await (await counterOf()).count(first.eventID ?? sequence, entries, {
      deadline: remaining === undefined ? undefined : Date.now() + remaining - DEADLINE_MARGIN_MS,
      retryDelaysMs: options.retryDelaysMs,
    });
    return { batchItemFailures: result.done ? [] : [{ itemIdentifier: sequence }] };
  };
}

/** The entry point's handler: the table named by GATEWAY_TABLE (the only store it needs). */
export function createAnalyticsStreamWorker(env: Record<string, string | undefined> = process.env) {
  return createAnalyticsStreamHandler(async () => {
    // Read directly rather than through loadSettings: the worker needs one variable, and no zod in its bundle.
    const tableName = env.GATEWAY_TABLE;
    if (!tableName) throw new Error("GATEWAY_TABLE is not set: the analytics stream worker needs it");
    return createAwsStores({ tableName, bucketName: env.GATEWAY_BUCKET ?? "", queueUrls: {} });
  });
}

const KEY_FIELDS = ["pk", "sk", "gsi1pk", "gsi1sk", "ttl", "requestBody", "responseBody", "headers"];

/** The request log an INSERT record carries, or undefined for any other record. */
export function requestLogOf(record: DynamoStreamRecord): RequestLog | undefined {
  if (record.eventName !== "INSERT" || !record.dynamodb?.SequenceNumber) return undefined;
  const image = record.dynamodb.NewImage;
  const pk = image?.pk && "S" in image.pk ? image.pk.S : undefined;
  const sk = image?.sk && "S" in image.sk ? image.sk.S : undefined;
  if (!image || !pk?.startsWith("LOG#") || sk !== "LOG") return undefined;
  let item: Record<string, unknown>;
  try {
    item = unmarshallItem(image);
  } catch (error) {
    console.error(`analytics stream: log ${pk} could not be read; it is not counted`, error);
    return undefined;
  }
  for (const field of KEY_FIELDS) delete item[field];
  const valid =
    typeof item.id === "string" &&
    typeof item.organisationId === "string" &&
    typeof item.createdAt === "string" &&
    typeof item.route === "string" &&
    typeof item.status === "number" &&
    typeof item.latencyMs === "number";
  if (!valid) {
    console.error(`analytics stream: ${pk} is not a request log; it is not counted`);
    return undefined;
  }
  return item as unknown as RequestLog;
}
