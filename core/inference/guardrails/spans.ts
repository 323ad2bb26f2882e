import { type Attributes, SpanKind, trace } from "@opentelemetry/api";
import type { Settings } from "../../config/settings.ts";
import type { GuardrailVerdict } from "./types.ts";

/**
 * Experimental OpenTelemetry spans of guardrail runs (spec 6: Portkey's `portkey.guardrail.*` style, here
 * `gateway.guardrail.*`), when EXPERIMENTAL_GEN_AI_OTEL_TRACES_ENABLED is on: one span per guardrail run,
 * `gateway.guardrail.<phase>`, timed like the run, and one `gateway.guardrail.check` event per check. Like the
 * generation spans (core/observe/metrics/observe.ts) they record nothing until the process registers an OpenTelemetry
 * SDK. Only ids, verdicts, actions and timings: no text, parameter or check data (which may quote the text).
 */

export interface GuardrailSpanContext {
  traceId: string;
  organisationId: string;
  workspaceId?: string;
  settings: Pick<Settings, "EXPERIMENTAL_GEN_AI_OTEL_TRACES_ENABLED">;
}

/** What a failed guardrail does to its request. */
export const actionOf = (verdict: GuardrailVerdict): "deny" | "soft_deny" | "log" =>
  verdict.deny ? (verdict.soft_deny_200 ? "soft_deny" : "deny") : "log";

/** Records the spans of final verdicts (after the run; async guardrails when they finish). */
export function recordGuardrailSpans(verdicts: readonly GuardrailVerdict[], context: GuardrailSpanContext): void {
  if (!context.settings.EXPERIMENTAL_GEN_AI_OTEL_TRACES_ENABLED || verdicts.length === 0) return;
  const tracer = trace.getTracer("ai-gateway");
  for (const verdict of verdicts) {
    const end = Date.parse(verdict.created_at);
    const start = end - verdict.execution_time_ms;
    const span = tracer.startSpan(`gateway.guardrail.${verdict.phase}`, {
      kind: SpanKind.INTERNAL,
      startTime: start,
    });
    // Without a registered SDK the span records nothing: skip building its attributes.
    if (!span.isRecording()) return;
    const attributes: Attributes = {
      "gateway.guardrail.phase": verdict.phase,
      "gateway.guardrail.id": verdict.id,
      "gateway.guardrail.verdict": verdict.verdict,
      "gateway.guardrail.action": actionOf(verdict),
      "gateway.guardrail.deny": verdict.deny,
      "gateway.guardrail.async": verdict.async,
      "gateway.guardrail.transformed": verdict.transformed,
      "gateway.guardrail.execution_time_ms": verdict.execution_time_ms,
      "gateway.organisation_id": context.organisationId,
      "gateway.workspace_id": context.workspaceId ?? "",
      "gateway.trace_id": context.traceId,
    };
    if (verdict.slug) attributes["gateway.guardrail.slug"] = verdict.slug;
    if (verdict.name) attributes["gateway.guardrail.name"] = verdict.name;
    span.setAttributes(attributes);
    for (const check of verdict.checks) {
      const event: Attributes = {
        "gateway.guardrail.check.id": check.id,
        "gateway.guardrail.check.verdict": check.verdict,
        "gateway.guardrail.check.execution_time_ms": check.execution_time_ms,
      };
      if (check.error) event["gateway.guardrail.check.error"] = check.error;
      // At the check's duration after the run's start: exact for checks that run concurrently (most), early for
      // a rewriting check that waited for the ones before it.
      span.addEvent("gateway.guardrail.check", event, Math.min(end, start + check.execution_time_ms));
    }
    span.end(end);
  }
}
