import type { AttemptRecord, InferenceOutcome } from "../gateway/outcome.ts";
import type { RequestContext } from "../http/context.ts";
import { headersForLog } from "../http/gateway-headers.ts";
import type { RouteSpec } from "../http/route-types.ts";
import type { ChatUsage } from "../providers/types.ts";
import type { RequestLog } from "./log-record.ts";

/**
 * Builds and writes the one log record of an authenticated request, after the response: at once for JSON
 * answers, when the stream ends for SSE (the outcome's `done`). Runs through ctx.waitUntil, so it is off the
 * response's critical path but finishes before a Lambda invocation ends.
 */
export async function logRequest(
  request: Request,
  response: Response,
  route: Pick<RouteSpec, "path">,
  ctx: RequestContext,
  /** Another call made for this request (the semantic cache's embedding call): logged as its own request. */
  outcome = ctx.outcome,
): Promise<void> {
  const { principal, services } = ctx;
  if (!principal) return;
  if (outcome) {
    await outcome.done;
    if (outcome.guardrailsDone) await guardrailsSettled(outcome);
  }
  const headers = request.headers;
  // Parsed once by the app for authenticated routes (invalid gateway headers were answered 400 there).
  const gateway = ctx.gateway;
  const usage = outcome?.usage;
  const log: RequestLog = {
    id: services.logger.newLogId(),
    createdAt: new Date(performance.timeOrigin + ctx.startedAt).toISOString(),
    traceId: ctx.traceId,
    spanId: gateway?.spanId,
    parentSpanId: gateway?.parentSpanId,
    spanName: gateway?.spanName,
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId,
    apiKeyId: principal.keyId,
    userId: principal.userId,
    metadata: gateway?.metadata,
    method: request.method,
    route: route.path,
    path: outcome && outcome !== ctx.outcome ? route.path : (ctx.path ?? new URL(request.url).pathname),
    status: outcome?.error?.status ?? outcome?.clientStatus ?? outcome?.status ?? response.status,
    provider: outcome?.provider,
    requestedModel: outcome?.requestedModel || undefined,
    answeredModel: outcome?.answeredModel,
    stream: outcome?.stream,
    // Inference routes keep these on the outcome; other routes' answers may carry them as headers.
    targetPath: outcome
      ? outcome.lastUsedOptionIndex
      : (response.headers.get("x-gateway-last-used-option-index") ?? undefined),
    retryCount: outcome ? outcome.retries : numberOrUndefined(response.headers.get("x-gateway-retry-attempt-count")),
    attempts: attemptsForLog(outcome?.attempts),
    cacheStatus: outcome ? outcome.cacheStatus : (response.headers.get("x-gateway-cache-status") ?? undefined),
    cacheSavedCost: outcome?.cacheSavedCost,
    latencyMs: Math.round((outcome?.totalMs ?? performance.now() - ctx.startedAt) * 10) / 10,
    upstreamLatencyMs: outcome?.upstreamFirstByteMs,
    timeToFirstTokenMs: outcome?.stream ? outcome.upstreamFirstByteMs : undefined,
    usage: usage ? usageForLog(usage, outcome?.usageEstimated === true) : undefined,
    units: outcome?.units && Object.keys(outcome.units).length > 0 ? outcome.units : undefined,
    cost: outcome?.cost?.priced ? outcome.cost.total : undefined,
    guardrails: outcome?.guardrails,
    error: outcome?.error ? { message: outcome.error.message, code: outcome.error.code } : undefined,
    headers: headersForLog(headers, {
      sensitiveHeaders: gateway?.sensitiveHeaders,
      organisationHeadersToMask: services.settings.ORGANISATION_HEADERS_TO_MASK,
    }),
    requestBody: services.settings.GATEWAY_LOG_BODIES ? outcome?.requestBody : undefined,
    responseBody: services.settings.GATEWAY_LOG_BODIES ? outcome?.responseBody : undefined,
    source: "gateway",
  };
  // A workspace may keep its logs longer or shorter than the deployment default (cached lookup).
  const retentionDays = principal.workspaceId
    ? await services.orgSettings
        .logRetentionDays(principal.organisationId, principal.workspaceId)
        .catch(() => undefined)
    : undefined;
  // Sizes known from the wire spare the logger a serialisation just to measure the bodies.
  const bodiesSize =
    outcome?.requestChars !== undefined && outcome.responseChars !== undefined
      ? outcome.requestChars + outcome.responseChars
      : undefined;
  // Returned, not awaited: this function's frame (the request, its context and answer) is done with now.
  return services.logger.write(log, retentionDays, bodiesSize).then(ignore);
}

function ignore(): void {}

/** Guardrail work still running after the answer, including work it started meanwhile (a stream's async checks). */
async function guardrailsSettled(outcome: InferenceOutcome): Promise<void> {
  for (let pending = outcome.guardrailsDone; pending; ) {
    await pending;
    if (outcome.guardrailsDone === pending) return;
    pending = outcome.guardrailsDone;
  }
}

/** The attempts worth a look: none for the usual single successful call. */
function attemptsForLog(attempts: AttemptRecord[] | undefined): RequestLog["attempts"] {
  if (!attempts || (attempts.length === 1 && attempts[0]!.error === undefined)) return undefined;
  return attempts.map((attempt) => ({
    targetPath: attempt.path,
    provider: attempt.provider,
    retry: attempt.retry,
    status: attempt.status,
    latencyMs: Math.round(attempt.ms * 10) / 10,
    error: attempt.error,
  }));
}

function numberOrUndefined(value: string | null): number | undefined {
  return value === null ? undefined : Number(value);
}

/** A chat usage as a log records it. */
export function usageForLog(usage: ChatUsage, estimated: boolean): NonNullable<RequestLog["usage"]> {
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    totalTokens: usage.total_tokens,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens,
    estimated,
  };
}
