/**
 * Storage ports. Every platform provides one adapter per port; all adapters pass the same contract suite
 * (test/contract). Nothing here knows SQLite, the filesystem, DynamoDB, S3 or SQS.
 */
import type { VectorIndex } from "./vector-index.ts";
import type { RequestLog } from "../observe/logs/log-record.ts";
import type { SecretResolver } from "./secret-refs.ts";

/** One record of the single-table design. Attributes other than the key fields are free-form JSON values. */
export interface RecordItem {
  pk: string;
  sk: string;
  /** Secondary index partition and sort key (optional: an item without gsi1pk is not in the index). */
  gsi1pk?: string;
  gsi1sk?: string;
  /** Expiry in Unix seconds. An item past its ttl is treated as absent by every read and condition. */
  ttl?: number;
  [attribute: string]: unknown;
}

/**
 * A write condition. All given parts must hold.
 * - `exists: false`: the item must be absent (or expired). `exists: true`: it must be present.
 * - `equals`: top-level attributes must have exactly these values (use `null` for "attribute absent").
 */
export interface WriteCondition {
  exists?: boolean;
  equals?: Record<string, unknown>;
}

export interface RecordQuery {
  /** Partition to read: `pk` of the table, or `gsi1pk` when `index` is `gsi1`. */
  partition: string;
  index?: "gsi1";
  /** Sort-key filters (on `sk`, or `gsi1sk` for the index). Prefix and range may not be combined. */
  prefix?: string;
  /** Inclusive lower and upper bounds. */
  from?: string;
  to?: string;
  order?: "asc" | "desc";
  /** Page size, 1..1000, default 100. */
  limit?: number;
  /** Opaque cursor from a previous page. */
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  /** Present when more items may follow. */
  cursor?: string;
}

export interface RecordUpdate {
  /** Top-level attributes to set. */
  set?: Record<string, unknown>;
  /** Top-level attributes to remove. */
  remove?: string[];
}

export interface Records {
  get(pk: string, sk: string): Promise<RecordItem | undefined>;
  /**
   * Creates or replaces the whole item. Throws ConditionFailedError when `condition` does not hold, and
   * RangeError when pk or sk is not a non-empty string (or gsi1pk / gsi1sk is present but empty).
   */
  put(item: RecordItem, condition?: WriteCondition): Promise<void>;
  /**
   * Applies `update` to an existing item and returns the item after the update. Throws ConditionFailedError
   * when the item is absent or `condition` does not hold. Key attributes (pk, sk) cannot be changed
   * (RangeError). Setting an attribute to `undefined` removes it.
   */
  update(pk: string, sk: string, update: RecordUpdate, condition?: WriteCondition): Promise<RecordItem>;
  /** Deleting an absent item is not an error unless a condition says so. */
  delete(pk: string, sk: string, condition?: WriteCondition): Promise<void>;
  /**
   * Live items of one partition in sort-key order. A bad limit, a prefix combined with a range, or a cursor
   * this adapter did not make throw RangeError (a client error: answer 400).
   */
  query(query: RecordQuery): Promise<Page<RecordItem>>;
}

export interface CounterAddOptions {
  /**
   * When set, the add is applied only if the new value stays <= ceiling; otherwise nothing changes and
   * `admitted` is false. Atomic: concurrent adds never push the value past the ceiling.
   */
  ceiling?: number;
  /**
   * When set, the add is applied only if the value before it is < below (the add itself may take the value
   * past it); otherwise nothing changes and `admitted` is false. Atomic like `ceiling`. Reservations use it:
   * admitted while a budget is not yet used up, whatever the size of the reservation.
   */
  below?: number;
  /**
   * Unix seconds after which the counter is treated as absent (0). Set on creation; a later add to a live
   * counter keeps the expiry it has. An add to an expired counter starts again from 0 with this expiry.
   */
  expiresAt?: number;
}

export interface CounterResult {
  admitted: boolean;
  /** The value after the add (or the unchanged current value when not admitted). */
  value: number;
}

export interface Counters {
  add(key: string, amount: number, options?: CounterAddOptions): Promise<CounterResult>;
  /** Current value; 0 for absent or expired counters. */
  get(key: string): Promise<number>;
  getMany(keys: string[]): Promise<Map<string, number>>;
  delete(key: string): Promise<void>;
}

export interface BlobInfo {
  key: string;
  size: number;
  contentType?: string;
  lastModified: Date;
}

export type BlobBody = Uint8Array | string | ReadableStream<Uint8Array>;

/**
 * Blob keys: 1..1024 bytes of `/`-separated segments, none empty, `.` or `..`, no NUL (RangeError otherwise;
 * see core/store/blob-keys.ts). `a` and `a/b` may both exist, as on S3.
 */
export interface Blobs {
  put(key: string, body: BlobBody, options?: { contentType?: string }): Promise<{ size: number }>;
  /** The body as a stream, or undefined when absent. */
  get(key: string): Promise<(BlobInfo & { body: ReadableStream<Uint8Array> }) | undefined>;
  head(key: string): Promise<BlobInfo | undefined>;
  /** Keys in lexicographic order. `limit` 1..1000, default 1000. */
  list(prefix: string, options?: { limit?: number; cursor?: string }): Promise<Page<BlobInfo>>;
  delete(key: string): Promise<void>;
  /** A URL that downloads the blob without other credentials until it expires. */
  signedUrl(key: string, options: { expiresInSeconds: number; filename?: string }): Promise<string>;
  /**
   * Only for adapters whose signed URLs the gateway serves itself (the local folder: `GET /_blobs/<key>`):
   * the key (and download file name) a URL made by signedUrl grants, or undefined when the URL is not
   * validly signed, names an invalid key, or has expired.
   */
  verifySignedUrl?(url: URL): { key: string; filename?: string } | undefined;
}

export interface QueueMessage {
  id: string;
  /** Handle for ack / release; valid until the visibility timeout ends. */
  receipt: string;
  body: unknown;
  /** How many times the message has been received, this time included. */
  attempts: number;
}

export interface Queue {
  send(queue: string, body: unknown, options?: { delaySeconds?: number }): Promise<string>;
  sendBatch(queue: string, bodies: unknown[]): Promise<string[]>;
  /**
   * Receives up to `max` visible messages and hides them for `visibilityTimeoutSeconds`. A message not acked
   * before then is delivered again (at-least-once). A message received more than the queue's max receive
   * count is moved to the queue's dead-letter queue (`deadLetterQueueName(queue)`) instead of delivered.
   * `max` is 1..MAX_RECEIVE_BATCH (SQS's limit); fewer may come back even when more are waiting.
   */
  receive(
    queue: string,
    options: { max: number; visibilityTimeoutSeconds: number; waitSeconds?: number },
  ): Promise<QueueMessage[]>;
  ack(queue: string, receipt: string): Promise<void>;
  /** Makes a received message visible again after `delaySeconds` (default 0). */
  release(queue: string, receipt: string, delaySeconds?: number): Promise<void>;
}

/** Logical queues of the gateway. */
export const QUEUE_NAMES = ["exports", "batches"] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];
export const deadLetterQueueName = (queue: string) => `${queue}-dlq`;
/** Receives before a message is dead-lettered. */
export const MAX_RECEIVES = 5;
/** Most messages one receive returns (SQS's limit, kept on every platform). */
export const MAX_RECEIVE_BATCH = 10;

/** Refuses a receive's `max` outside 1..MAX_RECEIVE_BATCH (every Queue adapter checks it the same way). */
export function checkReceiveMax(max: number): void {
  if (!Number.isInteger(max) || max < 1 || max > MAX_RECEIVE_BATCH) {
    throw new RangeError(`max must be 1..${MAX_RECEIVE_BATCH}`);
  }
}

export interface Secrets {
  /** Encrypts a small value (provider credentials); the result is safe to store in Records. */
  encrypt(plaintext: string): Promise<string>;
  /** Throws when the ciphertext was tampered with or made with another key. */
  decrypt(ciphertext: string): Promise<string>;
}

export interface Stores {
  records: Records;
  /** Where request logs are written and read back from (LogSink below); large bodies go to `blobs`. */
  logSink: LogSink;
  counters: Counters;
  blobs: Blobs;
  queue: Queue;
  secrets: Secrets;
  /** The semantic cache's vector index (core/store/vector-index.ts); loads nothing until first used. */
  vectors: VectorIndex;
  /** Resolves secret references in provider credentials (core/store/secret-refs.ts); none: refused. */
  secretRefs?: SecretResolver;
  close(): Promise<void>;
}

export class ConditionFailedError extends Error {
  constructor(message = "condition failed") {
    super(message);
    this.name = "ConditionFailedError";
  }
}

/** A store could not be reached or answered with a fault; answered to clients as 503 (retryable). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/** One request log handed to a sink, with how long to keep it. */
export interface LogEntry {
  /**
   * The log. Its bodies may still be deferred (LateJson, late-json.ts: a streamed answer's transcript, an
   * answer's JSON text): resolving them is the sink's job, never the caller's.
   */
  log: RequestLog;
  retentionDays: number;
  /**
   * The bodies' size on the wire (characters), when the caller knows it: small bodies are then stored inline
   * without serialising them first to measure.
   */
  bodiesSize?: number;
}

/**
 * Where request logs go, and are read back from. Each platform provides one adapter (AWS: core/observe/logs/records-log-sink.ts;
 * local: core/platform/local/thread-log-sink.ts); all pass the same contract test
 * (test/contract/log-sink.contract.ts): a written log reads back through `records` and the Blobs port
 * (RequestLogger.get / list) as log-layout.ts lays it out. The core hands every log to the sink and tests no
 * capability.
 *
 * `write` takes what it needs from the entry before it returns (the caller then drops the bodies) and
 * resolves once the log is stored: readable, and kept across a restart as the platform's durability allows
 * (docs/durability.md). It rejects when the log was not stored; RequestLogger's circuit breaker bounds how
 * long it may take and stops calling a failing sink for a while.
 */
export interface LogSink {
  write(entry: LogEntry): Promise<void>;
  /** The Records store the logs are read from (their large bodies from Stores.blobs). */
  readonly records: Records;
}
