import { newId } from "../ids.ts";
import type { Blobs, Records } from "../store/ports.ts";
import { CircuitBreaker } from "./circuit-breaker.ts";
import { logKey } from "./log-keys.ts";
import type { RequestLog } from "./log-record.ts";
import type { LogSearchPage } from "./log-search.ts";
import type { LogSink } from "./log-sink.ts";
import { storedLog } from "./log-layout.ts";

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
 * Writes request logs to the platform's LogSink, reads one back through its Records and Blobs, and searches
 * them through the sink. Layout: one record per log (`LOG#<id>`), expiring after the retention period
 * (log-keys.ts, log-layout.ts), and the sink's search index beside it. Writes go through a circuit breaker so a
 * failing sink never slows or fails a request.
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
    const log = storedLog(item);
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
   * Newest first, through the sink's search index (log-search.ts): from `to` (default now) back to `from`
   * (default: the retention period). A page may be short, even empty, and still have a cursor: each call
   * reads a bounded share of the index. Logs come without their bodies.
   */
  list(organisationId: string, filter: LogFilter, limit: number, cursor?: string): Promise<LogSearchPage> {
    const to = filter.to?.getTime() ?? Date.now();
    const from = filter.from?.getTime() ?? to - this.retentionDays * DAY_MS;
    // An empty filter value (`?model=`) filters nothing, as before the search had an index.
    const given = (value: string | undefined) => value || undefined;
    return this.sink.search({
      organisationId,
      // Exact, never loosened: a workspace key's searches carry its workspace.
      workspaceId: filter.workspaceId,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      traceId: given(filter.traceId),
      apiKeyId: given(filter.apiKeyId),
      userId: given(filter.userId),
      status: filter.status,
      provider: given(filter.provider),
      model: given(filter.model),
      metadataKey: given(filter.metadataKey),
      metadataValue: given(filter.metadataKey) === undefined ? undefined : filter.metadataValue,
      minCost: filter.minCost,
      maxCost: filter.maxCost,
      limit,
      cursor,
    });
  }
}

function observerFailed(log: RequestLog, error: unknown): void {
  console.error(`log observer failed for ${log.id}`, error);
}
