import { newId } from "../../util/ids.ts";
import type { Blobs, Page, Records, LogSink } from "../../store/ports.ts";
import { CircuitBreaker } from "./circuit-breaker.ts";
import { dayPartition, logKey } from "./log-keys.ts";
import type { RequestLog } from "./log-record.ts";

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
 * Writes request logs to the platform's LogSink and reads them back through its Records and Blobs. Layout: one
 * record per log (`LOG#<id>`), indexed through gsi1 by organisation and day (`LOGS#<org>#<yyyy-mm-dd>`, sort
 * key `<iso time>#<id>`), expiring after the retention period (log-keys.ts, log-layout.ts). Writes go
 * through a circuit breaker so a failing sink never slows or fails a request.
 */
export class RequestLogger {
  readonly breaker: CircuitBreaker;
  private readonly sink: LogSink;
  private readonly records: Records;
  private readonly blobs: Blobs;
  private readonly retentionDays: number;
  private readonly observers: LogObserver[] = [];

  constructor(
    sink: LogSink,
    blobs: Blobs,
    options: { retentionDays: number; threshold: number; backoffMs: number; timeoutMs: number },
  ) {
    this.sink = sink;
    this.records = sink.records;
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
   * Once the sink has the log, its bodies and headers are dropped from `log`: observers do not read them, and
   * kept until the write is acknowledged (milliseconds locally: writes are committed in batches) they made
   * each request's bodies outlive young-generation GCs.
   */
  async write(log: RequestLog, retentionDays = this.retentionDays, bodiesSize?: number): Promise<boolean> {
    const storing = this.breaker.run(() => this.sink.write({ log, retentionDays, bodiesSize }));
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

  /** One log with its bodies (loaded from Blobs when stored there). */
  async get(id: string): Promise<RequestLog | undefined> {
    const { pk, sk } = logKey(id);
    const item = await this.records.get(pk, sk);
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
