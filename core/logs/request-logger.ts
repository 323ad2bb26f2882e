import { newId } from "../ids.ts";
import { isLateJson } from "../store/late-json.ts";
import type { Blobs, Page, RecordItem, Records } from "../store/ports.ts";
import { CircuitBreaker } from "./circuit-breaker.ts";
import type { RequestLog } from "./log-record.ts";

/** Bodies up to this size stay inline in the record; larger ones go to Blobs (DynamoDB items max 400 KB). */
const INLINE_BODY_BYTES = 16 * 1024;
/** A logged body is cut at this size so a huge answer cannot blow up the log store. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;
const DAY_MS = 86_400_000;

export type LogObserver = (log: RequestLog, stored: boolean) => Promise<void> | void;

export interface LogFilter {
  from?: Date;
  to?: Date;
  workspaceId?: string;
  status?: number;
  provider?: string;
  model?: string;
  traceId?: string;
  metadataKey?: string;
  metadataValue?: string;
  minCost?: number;
  maxCost?: number;
  apiKeyId?: string;
  userId?: string;
}

/**
 * Writes and reads request logs. Layout: one record per log (`LOG#<id>`), indexed through gsi1 by
 * organisation and day (`LOGS#<org>#<yyyy-mm-dd>`, sort key `<iso time>#<id>`), expiring after the retention
 * period. Writes go through a circuit breaker so a failing store never slows or fails a request.
 */
export class RequestLogger {
  readonly breaker: CircuitBreaker;
  private readonly records: Records;
  private readonly blobs: Blobs;
  private readonly retentionDays: number;
  private readonly observers: LogObserver[] = [];

  constructor(
    records: Records,
    blobs: Blobs,
    options: { retentionDays: number; threshold: number; backoffMs: number; timeoutMs: number },
  ) {
    this.records = records;
    this.blobs = blobs;
    this.retentionDays = options.retentionDays;
    this.breaker = new CircuitBreaker(options);
  }

  newLogId(): string {
    return newId("log");
  }

  /**
   * Called after each write attempt with the log and whether it was stored (analytics, metrics). Observers
   * run after the response like the write itself; their failures are logged, never thrown.
   */
  observe(observer: LogObserver): void {
    this.observers.push(observer);
  }

  /**
   * Stores a log and then tells the observers. Never throws: failures are counted by the breaker.
   * `retentionDays` overrides the default (per workspace). `bodiesSize`: the bodies' size as sent on the wire
   * (characters), when the caller knows it: small bodies are then stored inline without serialising them
   * first to measure.
   *
   * Once the store has the log (serialised, or copied into the item it writes), its bodies and headers are
   * dropped from `log`: observers do not read them, and kept until the write is acknowledged (milliseconds
   * locally: the storage thread batches) they made each request's bodies outlive young-generation GCs.
   */
  async write(log: RequestLog, retentionDays = this.retentionDays, bodiesSize?: number): Promise<boolean> {
    const storing = this.breaker.run(() => this.store(log, retentionDays, bodiesSize));
    log.requestBody = undefined;
    log.responseBody = undefined;
    log.headers = undefined;
    const stored = await storing;
    // Observers run side by side; only those that return a promise are waited for (most return nothing).
    let waiting: Array<Promise<void>> | undefined;
    for (const observer of this.observers) {
      try {
        const result = observer(log, stored);
        if (result) {
          waiting ??= [];
          waiting.push(result.catch((error) => observerFailed(log, error)));
        }
      } catch (error) {
        observerFailed(log, error);
      }
    }
    if (waiting) await Promise.all(waiting);
    return stored;
  }

  /**
   * Writes the log's record (and its bodies' blob when large). Not async: the item is built and handed to the
   * store at once, and only the write's promise is waited for.
   */
  private store(log: RequestLog, retentionDays: number, bodiesSize?: number): Promise<void> {
    const { requestBody } = log;
    let { responseBody } = log;
    const small = bodiesSize !== undefined && bodiesSize < INLINE_BODY_BYTES / 2;
    // A streamed answer still to be assembled is left to a store that assembles it off the event loop, unless
    // it must be measured here.
    if (isLateJson(responseBody) && !(small && this.records.takesLateJson)) responseBody = responseBody.toJSON();
    let bodies: { request: unknown; response: unknown } = { request: requestBody, response: responseBody };
    // Serialised once to measure (unless the wire sizes say they are small); cut per body only when the two
    // together pass the per-body limit.
    let bodiesJson = small ? undefined : JSON.stringify(bodies);
    if (bodiesJson !== undefined && bodiesJson.length > MAX_BODY_BYTES) {
      bodies = { request: truncate(requestBody), response: truncate(responseBody) };
      bodiesJson = JSON.stringify(bodies);
    }
    const created = Date.parse(log.createdAt);
    // One copy of the log, its bodies inline; large ones (truncated ones are) go to Blobs instead. Attributes
    // set to undefined are not stored.
    const item: RecordItem = {
      ...log,
      responseBody,
      pk: `LOG#${log.id}`,
      sk: "LOG",
      gsi1pk: dayPartition(log.organisationId, created),
      gsi1sk: `${log.createdAt}#${log.id}`,
      ttl: Math.floor(created / 1000) + retentionDays * 86_400,
    };
    if (bodiesJson === undefined || bodiesJson.length <= INLINE_BODY_BYTES) return this.records.put(item);
    const key = `logs/${log.createdAt.slice(0, 10)}/${log.id}.json`;
    item.requestBody = undefined;
    item.responseBody = undefined;
    item.bodiesKey = key;
    return this.blobs.put(key, bodiesJson, { contentType: "application/json" }).then(() => this.records.put(item));
  }

  /** One log with its bodies (loaded from Blobs when stored there). */
  async get(id: string): Promise<RequestLog | undefined> {
    const item = await this.records.get(`LOG#${id}`, "LOG");
    if (!item) return undefined;
    const log = strip(item);
    if (log.bodiesKey) {
      const blob = await this.blobs.get(log.bodiesKey);
      if (blob) {
        const bodies = JSON.parse(await new Response(blob.body).text());
        log.requestBody = bodies.request;
        log.responseBody = bodies.response;
      }
    }
    return log;
  }

  /**
   * Newest first, across day partitions from `to` back to `from` (default: the retention period), filtered
   * in memory. The cursor names the day and the sort key of the last log returned.
   */
  async list(organisationId: string, filter: LogFilter, limit: number, cursor?: string): Promise<Page<RequestLog>> {
    const to = filter.to?.getTime() ?? Date.now();
    const from = filter.from?.getTime() ?? to - this.retentionDays * DAY_MS;
    const days = Math.floor(to / DAY_MS) - Math.floor(from / DAY_MS);
    let [dayIndex, after] = decodeCursor(cursor);
    const items: RequestLog[] = [];
    for (; dayIndex <= days; dayIndex++, after = undefined) {
      let storeCursor: string | undefined;
      do {
        const page = await this.records.query({
          partition: dayPartition(organisationId, to - dayIndex * DAY_MS),
          index: "gsi1",
          from: `${new Date(from).toISOString()}#`,
          to: after ?? `${new Date(to).toISOString()}#~`,
          order: "desc",
          limit: Math.min(1000, Math.max(limit * 2, 50)),
          cursor: storeCursor,
        });
        for (const item of page.items) {
          if (after && String(item.gsi1sk) >= after) continue;
          const log = strip(item);
          if (!matches(log, filter)) continue;
          items.push(log);
          if (items.length === limit) return { items, cursor: encodeCursor(dayIndex, String(item.gsi1sk)) };
        }
        storeCursor = page.cursor;
      } while (storeCursor);
    }
    return { items };
  }
}

function observerFailed(log: RequestLog, error: unknown): void {
  console.error(`log observer failed for ${log.id}`, error);
}

function dayPartition(organisationId: string, timeMs: number): string {
  return `LOGS#${organisationId}#${new Date(timeMs).toISOString().slice(0, 10)}`;
}

function strip(item: Record<string, unknown>): RequestLog {
  const { pk, sk, gsi1pk, gsi1sk, ttl, ...log } = item;
  return log as unknown as RequestLog;
}

function matches(log: RequestLog, filter: LogFilter): boolean {
  if (filter.workspaceId && log.workspaceId !== filter.workspaceId) return false;
  if (filter.status !== undefined && log.status !== filter.status) return false;
  if (filter.provider && log.provider !== filter.provider) return false;
  if (filter.model && log.requestedModel !== filter.model && log.answeredModel !== filter.model) return false;
  if (filter.traceId && log.traceId !== filter.traceId) return false;
  if (filter.apiKeyId && log.apiKeyId !== filter.apiKeyId) return false;
  if (filter.userId && log.userId !== filter.userId) return false;
  if (filter.metadataKey) {
    const value = log.metadata?.[filter.metadataKey];
    if (value === undefined || (filter.metadataValue !== undefined && value !== filter.metadataValue)) return false;
  }
  if (filter.minCost !== undefined && (log.cost ?? 0) < filter.minCost) return false;
  if (filter.maxCost !== undefined && (log.cost ?? 0) > filter.maxCost) return false;
  return true;
}

function truncate(body: unknown): unknown {
  if (body === undefined) return undefined;
  const text = typeof body === "string" ? body : JSON.stringify(body);
  if (text.length <= MAX_BODY_BYTES) return body;
  return { truncated: true, bytes: text.length, head: text.slice(0, MAX_BODY_BYTES) };
}

function encodeCursor(dayIndex: number, lastSortKey: string): string {
  return Buffer.from(`${dayIndex}|${lastSortKey}`).toString("base64url");
}

function decodeCursor(cursor: string | undefined): [number, string | undefined] {
  if (!cursor) return [0, undefined];
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const separator = text.indexOf("|");
  const dayIndex = Number(text.slice(0, separator));
  if (separator < 1 || !Number.isInteger(dayIndex) || dayIndex < 0) throw new RangeError("invalid cursor");
  return [dayIndex, text.slice(separator + 1) || undefined];
}
