import type { Settings } from "../../../config/settings.ts";
import type { RequestLog } from "../../../observe/logs/log-record.ts";

/**
 * Exports MCP request logs to an OpenTelemetry collector as OTLP/HTTP JSON log records (spec 6), when
 * OTEL_EXPORTER_OTLP_LOGS_ENDPOINT (used as is) or OTEL_EXPORTER_OTLP_ENDPOINT (+ `/v1/logs`) is set, with
 * OTEL_EXPORTER_OTLP_(LOGS_)HEADERS and the batch log record processor's OTEL_BLRP_* variables. Batched and
 * off the request path: `enqueue` only appends to a bounded queue (the oldest records are dropped when it is
 * full); a timer posts batches; a failed post is reported once and its batch dropped. A log carries what the
 * request log holds (arguments only as MCP_LOG_ARGUMENTS allows), never headers or credentials.
 * No OpenTelemetry SDK is bundled for this: the OTLP JSON encoding of a log record is small.
 */

type OtlpSettings = Pick<
  Settings,
  | "OTEL_EXPORTER_OTLP_ENDPOINT"
  | "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"
  | "OTEL_EXPORTER_OTLP_HEADERS"
  | "OTEL_EXPORTER_OTLP_LOGS_HEADERS"
  | "OTEL_SERVICE_NAME"
  | "OTEL_BLRP_MAX_QUEUE_SIZE"
  | "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE"
  | "OTEL_BLRP_SCHEDULE_DELAY"
  | "OTEL_BLRP_EXPORT_TIMEOUT"
>;

export class OtlpLogExporter {
  readonly url: string;
  readonly #headers: Record<string, string>;
  readonly #settings: OtlpSettings;
  #queue: RequestLog[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #posting: Promise<void> = Promise.resolve();
  #failing = false;
  /** Records dropped because the queue was full (for tests and diagnostics). */
  dropped = 0;

  constructor(settings: OtlpSettings) {
    this.#settings = settings;
    this.url =
      settings.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT ??
      `${settings.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/+$/, "")}/v1/logs`;
    this.#headers = {
      ...parseOtlpHeaders(settings.OTEL_EXPORTER_OTLP_HEADERS),
      ...parseOtlpHeaders(settings.OTEL_EXPORTER_OTLP_LOGS_HEADERS),
      "content-type": "application/json",
    };
  }

  enqueue(log: RequestLog): void {
    if (this.#queue.length >= this.#settings.OTEL_BLRP_MAX_QUEUE_SIZE) {
      this.#queue.shift();
      this.dropped++;
    }
    this.#queue.push(log);
    if (this.#queue.length >= this.#settings.OTEL_BLRP_MAX_EXPORT_BATCH_SIZE) void this.flush();
    else this.#timer ??= unref(setTimeout(() => void this.flush(), this.#settings.OTEL_BLRP_SCHEDULE_DELAY));
  }

  /** Posts everything queued now (in batches, one at a time). Never throws. */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#posting = this.#posting.then(async () => {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#settings.OTEL_BLRP_MAX_EXPORT_BATCH_SIZE);
        await this.#post(batch);
      }
    });
    return this.#posting;
  }

  async #post(batch: RequestLog[]): Promise<void> {
    try {
      const response = await fetch(this.url, {
        method: "POST",
        headers: this.#headers,
        body: JSON.stringify(otlpLogsBody(batch, this.#settings.OTEL_SERVICE_NAME)),
        signal: AbortSignal.timeout(this.#settings.OTEL_BLRP_EXPORT_TIMEOUT),
      });
      await response.body?.cancel().catch(() => {});
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      this.#failing = false;
    } catch (error) {
      // One line per outage, not one per batch.
      if (!this.#failing) console.warn(`OTLP log export to ${this.url} failed: ${(error as Error).message}`);
      this.#failing = true;
    }
  }
}

const exporters = new WeakMap<object, OtlpLogExporter | null>();

/** The process's exporter for these settings, or undefined when no OTLP endpoint is configured. */
export function otlpLogExporter(settings: OtlpSettings): OtlpLogExporter | undefined {
  let exporter = exporters.get(settings);
  if (exporter === undefined) {
    const configured = settings.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT ?? settings.OTEL_EXPORTER_OTLP_ENDPOINT;
    exporter = configured ? new OtlpLogExporter(settings) : null;
    exporters.set(settings, exporter);
  }
  return exporter ?? undefined;
}

/** `key1=value1,key2=value2` with URL-encoded values (the OTLP exporter convention). */
export function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim().toLowerCase();
    try {
      headers[name] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      headers[name] = pair.slice(at + 1).trim();
    }
  }
  return headers;
}

type AnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

function anyValue(value: unknown): AnyValue {
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  if (typeof value === "string") return { stringValue: value };
  return { stringValue: JSON.stringify(value) };
}

/** The OTLP JSON `ExportLogsServiceRequest` of some MCP request logs. */
export function otlpLogsBody(logs: RequestLog[], serviceName: string) {
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: serviceName } }] },
        scopeLogs: [{ scope: { name: "ai-gateway.mcp" }, logRecords: logs.map(logRecordOf) }],
      },
    ],
  };
}

function logRecordOf(log: RequestLog) {
  const mcp = log.mcp;
  const attributes: Record<string, unknown> = {
    "gateway.log_id": log.id,
    "gateway.trace_id": log.traceId,
    "gateway.organisation_id": log.organisationId,
    "gateway.workspace_id": log.workspaceId,
    "gateway.api_key_id": log.apiKeyId,
    "gateway.user_id": log.userId,
    "http.request.method": log.method,
    "http.response.status_code": log.status,
    "gateway.latency_ms": log.latencyMs,
    "mcp.server.id": mcp?.serverId,
    "mcp.server.slug": mcp?.serverSlug,
    "mcp.method.name": mcp?.method,
    "mcp.name": mcp?.name,
    "mcp.arguments.hash": mcp?.argumentsHash,
    "mcp.arguments": mcp?.arguments,
    "mcp.result.bytes": mcp?.resultBytes,
    "mcp.tool.is_error": mcp?.toolError,
    "error.type": log.error?.code ?? undefined,
    "error.message": log.error?.message,
  };
  const time = `${BigInt(Date.parse(log.createdAt)) * 1_000_000n}`;
  const failed = log.status >= 400 || log.error !== undefined;
  return {
    timeUnixNano: time,
    observedTimeUnixNano: `${BigInt(Date.now()) * 1_000_000n}`,
    severityNumber: failed ? 17 : 9,
    severityText: failed ? "ERROR" : "INFO",
    body: { stringValue: `${mcp?.method ?? log.method}${mcp?.name ? ` ${mcp.name}` : ""}` },
    attributes: Object.entries(attributes)
      .filter(([, value]) => value !== undefined && value !== null)
      .map(([key, value]) => ({ key, value: anyValue(value) })),
    // OTLP wants W3C ids (32 / 16 hex digits); other trace ids stay in the gateway.trace_id attribute.
    ...(/^[0-9a-f]{32}$/i.test(log.traceId) ? { traceId: log.traceId.toLowerCase() } : {}),
  };
}

function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
