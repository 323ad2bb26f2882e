import type { Blobs, LogEntry, RecordItem } from "../../store/ports.ts";
import { isLateJson } from "./late-json.ts";
import { bodiesBlobKey, logKey } from "./log-keys.ts";
import type { RequestLog } from "./log-record.ts";

/** Bodies up to this size stay inline in the record; larger ones go to Blobs (DynamoDB items max 400 KB). */
const INLINE_BODY_BYTES = 16 * 1024;
/** A logged body is cut at this size so a huge answer cannot blow up the log store. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** How a log is stored, on every platform: its record, and its bodies' blob when they are large. */
export interface LogLayout {
  /**
   * `LOG#<id>`, expiring after the retention period. Searches find it through the index its sink keeps beside it
   * (log-search.ts); the record itself is read by id.
   */
  item: RecordItem;
  /** The bodies as one JSON blob, when too large for the record (the record then names it: bodiesKey). */
  blob?: { key: string; json: string };
}

/**
 * Lays a log out as its record (and blob). Bodies the wire sizes say are small stay in the item as given,
 * deferred ones (LateJson) included: the sink resolves those (on the event loop, or on a storage thread).
 * Other bodies are resolved and serialised here to be measured, once.
 */
export function layoutLog({ log, retentionDays, bodiesSize }: LogEntry): LogLayout {
  const small = bodiesSize !== undefined && bodiesSize < INLINE_BODY_BYTES / 2;
  let { requestBody, responseBody } = log;
  let bodiesJson: string | undefined;
  if (!small) {
    requestBody = resolveLateJson(requestBody);
    responseBody = resolveLateJson(responseBody);
    bodiesJson = JSON.stringify({ request: requestBody, response: responseBody });
    // Cut per body only when the two together pass the per-body limit.
    if (bodiesJson.length > MAX_BODY_BYTES) {
      bodiesJson = JSON.stringify({ request: truncate(requestBody), response: truncate(responseBody) });
    }
  }
  const created = Date.parse(log.createdAt);
  // Attributes set to undefined are not stored.
  const item: RecordItem = {
    ...log,
    requestBody,
    responseBody,
    ...logKey(log.id),
    ttl: Math.floor(created / 1000) + retentionDays * 86_400,
  };
  if (bodiesJson === undefined || bodiesJson.length <= INLINE_BODY_BYTES) return { item };
  const key = bodiesBlobKey(log.id, log.createdAt);
  item.requestBody = undefined;
  item.responseBody = undefined;
  item.bodiesKey = key;
  return { item, blob: { key, json: bodiesJson } };
}

/** A deferred body as the plain value it stands for; other values as they are. */
export function resolveLateJson(body: unknown): unknown {
  return isLateJson(body) ? body.toJSON() : body;
}

/**
 * A body as the plain JSON value it serialises to, for stores that take nothing else (DynamoDB): a multipart
 * request's body holds UploadedFile objects (toJSON: name, type, size, hash), which DynamoDB refused, so on AWS
 * such requests were never logged. Bodies that are plain already (most) are returned as they are.
 */
export function plainJson(body: unknown): unknown {
  return isPlain(body) ? body : JSON.parse(JSON.stringify(body) ?? "null");
}

function isPlain(value: unknown): boolean {
  if (value === null || typeof value !== "object") return typeof value !== "function";
  if (Array.isArray(value)) return value.every(isPlain);
  const prototype = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && Object.values(value).every(isPlain);
}

function truncate(body: unknown): unknown {
  if (body === undefined) return undefined;
  const text = typeof body === "string" ? body : JSON.stringify(body);
  if (text.length <= MAX_BODY_BYTES) return body;
  return { truncated: true, bytes: text.length, head: text.slice(0, MAX_BODY_BYTES) };
}

/**
 * Stores a log as laid out: its bodies' blob first (the record names it), then the record through `putRecord`
 * (with the sink's index entries). Not async: the caller builds the layout at once, so it may drop the log's
 * bodies as soon as this returns.
 */
export function storeLayout(
  blobs: Blobs,
  { item, blob }: LogLayout,
  putRecord: (item: RecordItem) => Promise<void>,
): Promise<void> {
  if (!blob) return putRecord(item);
  return blobs.put(blob.key, blob.json, { contentType: "application/json" }).then(() => putRecord(item));
}

/** A log record as the log it holds (key, index and expiry attributes left out). */
export function storedLog(item: Record<string, unknown>): RequestLog {
  const { pk, sk, gsi1pk, gsi1sk, ttl, ...log } = item;
  return log as unknown as RequestLog;
}
