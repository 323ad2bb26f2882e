import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { RequestLog } from "../logs/log-record.ts";
import type { Settings } from "../../config/settings.ts";
import type { AnalyticsRecorder } from "../analytics/recorder.ts";
import type { RequestLogger } from "../logs/request-logger.ts";
import type { GatewayMetrics } from "./prometheus.ts";

/** What the log observers read and set of a process's services (core/services.ts Services). */
interface ObservedServices {
  logger: RequestLogger;
  analytics: AnalyticsRecorder;
  settings: Pick<Settings, "ENABLE_PROMETHEUS">;
  metrics?: GatewayMetrics;
}

/**
 * Everything that follows a written request log, after the response: analytics aggregates (only for logs
 * that were stored, so analytics and logs agree), Prometheus metrics (every request) and an OpenTelemetry
 * generation span per inference request (a no-op unless an OpenTelemetry SDK is registered).
 */
export function observeLogs(services: ObservedServices): void {
  services.logger.observe((log, stored) => (stored ? services.analytics.record(log) : undefined));
  if (services.settings.ENABLE_PROMETHEUS) {
    const ready = import("./prometheus.ts").then(({ PrometheusMetrics }) => {
      services.metrics = new PrometheusMetrics(services.logger.breaker);
      return services.metrics;
    });
    services.logger.observe(async (log) => (await ready).observe(log));
    metricsReady.set(services, ready);
  }
  services.logger.observe((log) => generationSpan(log));
}

const metricsReady = new WeakMap<ObservedServices, Promise<GatewayMetrics>>();

/** The metrics of a process, once loaded; undefined when ENABLE_PROMETHEUS is off. */
export async function metricsOf(services: ObservedServices): Promise<GatewayMetrics | undefined> {
  return services.metrics ?? (await metricsReady.get(services));
}

const tracer = trace.getTracer("ai-gateway");

/**
 * One span per inference request (a log with a provider or model), timed like the request, with the
 * organisation, workspace and environment (`_environment` metadata) attributes and the gen_ai.* usage.
 */
function generationSpan(log: RequestLog): void {
  if (log.source !== "gateway" || (!log.provider && !log.requestedModel)) return;
  const start = Date.parse(log.createdAt);
  const span = tracer.startSpan("gateway.generation", { kind: SpanKind.SERVER, startTime: start });
  // Without a registered OpenTelemetry SDK the span records nothing: skip building its attributes.
  if (!span.isRecording()) return;
  span.setAttributes({
    "gateway.organisation_id": log.organisationId,
    "gateway.workspace_id": log.workspaceId ?? "",
    "gateway.environment": log.metadata?._environment ?? "",
    "gateway.trace_id": log.traceId,
    "gateway.log_id": log.id,
    "http.route": log.route,
    "http.response.status_code": log.status,
    "gen_ai.system": log.provider ?? "",
    "gen_ai.request.model": log.requestedModel ?? "",
    "gen_ai.response.model": log.answeredModel ?? "",
    "gen_ai.usage.input_tokens": log.usage?.promptTokens ?? 0,
    "gen_ai.usage.output_tokens": log.usage?.completionTokens ?? 0,
    "gateway.cost_usd": log.cost ?? 0,
    "gateway.cache_status": log.cacheStatus ?? "",
  });
  if (log.error || log.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR, message: log.error?.message });
  span.end(start + log.latencyMs);
}
