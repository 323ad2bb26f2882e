import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { RequestLog } from "../logs/log-record.ts";

/** The generation spans of inference requests: loaded by the first inference log (observe.ts), never at init. */

const tracer = trace.getTracer("ai-gateway");

/**
 * One span per inference request (a log with a provider or model), timed like the request, with the
 * organisation, workspace and environment (`_environment` metadata) attributes and the gen_ai.* usage.
 */
export function generationSpan(log: RequestLog): void {
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
