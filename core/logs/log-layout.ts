import type { Blobs, RecordItem, Records } from "../store/ports.ts";
import { isLateJson } from "./late-json.ts";
import { bodiesBlobKey, dayPartition, logKey } from "./log-keys.ts";
import type { LogEntry } from "./log-sink.ts";

/** Bodies up to this size stay inline in the record; larger ones go to Blobs (DynamoDB items max 400 KB). */
const INLINE_BODY_BYTES = 16 * 1024;
/** A logged body is cut at this size so a huge answer cannot blow up the log store. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** How a log is stored, on every platform: its record, and its bodies' blob when they are large. */
export interface LogLayout {
  /** `LOG#<id>`, indexed by organisation and day (log-keys.ts), expiring after the retention period. */
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
    gsi1pk: dayPartition(log.organisationId, created),
    gsi1sk: `${log.createdAt}#${log.id}`,
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
function plainJson(body: unknown): unknown {
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
 * Stores a log as laid out: its bodies' blob first (the record names it), then the record. `resolveDeferred`
 * when the record store takes plain values only (DynamoDB); the local storage thread produces them itself.
 * Not async: the item is built at once, so the caller may drop the log's bodies as soon as this returns.
 */
export function storeLog(records: Records, blobs: Blobs, entry: LogEntry, resolveDeferred: boolean): Promise<void> {
  try {
    const { item, blob } = layoutLog(entry);
    if (resolveDeferred) {
      item.requestBody = plainJson(resolveLateJson(item.requestBody));
      item.responseBody = plainJson(resolveLateJson(item.responseBody));
    }
    if (!blob) return records.put(item);
    return blobs.put(blob.key, blob.json, { contentType: "application/json" }).then(() => records.put(item));
  } catch (error) {
    return Promise.reject(error);
  }
}
