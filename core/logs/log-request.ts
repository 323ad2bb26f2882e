import type { RequestContext } from "../http/context.ts";
import { gatewayHeader } from "../http/gateway-headers.ts";
import type { RouteSpec } from "../routes/table.ts";
import type { RequestLog } from "./log-record.ts";
import { maskHeaders } from "./mask-headers.ts";

/**
 * Builds and writes the one log record of an authenticated request, after the response: at once for JSON
 * answers, when the stream ends for SSE (the outcome's `done`). Runs through ctx.waitUntil, so it is off the
 * response's critical path but finishes before a Lambda invocation ends.
 */
export async function logRequest(
  request: Request,
  response: Response,
  route: RouteSpec,
  ctx: RequestContext,
): Promise<void> {
  const { principal, services } = ctx;
  if (!principal) return;
  const outcome = ctx.outcome;
  if (outcome) await outcome.done;
  const headers = request.headers;
  const usage = outcome?.usage;
  const log: RequestLog = {
    id: services.logger.newLogId(),
    createdAt: new Date(performance.timeOrigin + ctx.startedAt).toISOString(),
    traceId: ctx.traceId,
    spanId: gatewayHeader(headers, "span-id") ?? undefined,
    parentSpanId: gatewayHeader(headers, "parent-span-id") ?? undefined,
    spanName: gatewayHeader(headers, "span-name") ?? undefined,
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId,
    apiKeyId: principal.keyId,
    userId: principal.userId,
    metadata: parseMetadata(gatewayHeader(headers, "metadata")),
    method: request.method,
    route: route.path,
    path: new URL(request.url).pathname,
    status: outcome?.error?.status ?? outcome?.status ?? response.status,
    provider: outcome?.provider,
    requestedModel: outcome?.requestedModel || undefined,
    answeredModel: outcome?.answeredModel,
    stream: outcome?.stream,
    targetPath: response.headers.get("x-gateway-last-used-option-index") ?? undefined,
    retryCount: numberOrUndefined(response.headers.get("x-gateway-retry-attempt-count")),
    cacheStatus: response.headers.get("x-gateway-cache-status") ?? undefined,
    latencyMs: Math.round((outcome?.totalMs ?? performance.now() - ctx.startedAt) * 10) / 10,
    upstreamLatencyMs: outcome?.upstreamFirstByteMs,
    timeToFirstTokenMs: outcome?.stream ? outcome.upstreamFirstByteMs : undefined,
    usage: usage
      ? {
          promptTokens: usage.prompt_tokens,
          completionTokens: usage.completion_tokens,
          totalTokens: usage.total_tokens,
          cachedTokens: usage.prompt_tokens_details?.cached_tokens,
          reasoningTokens: usage.completion_tokens_details?.reasoning_tokens,
          estimated: outcome?.usageEstimated === true,
        }
      : undefined,
    cost: outcome?.cost?.priced ? outcome.cost.total : undefined,
    error: outcome?.error ? { message: outcome.error.message, code: outcome.error.code } : undefined,
    headers: maskHeaders(headers, {
      sensitive: listHeader(gatewayHeader(headers, "sensitive-headers")),
      organisationMasked: services.settings.ORGANISATION_HEADERS_TO_MASK,
    }),
    requestBody: services.settings.GATEWAY_LOG_BODIES ? outcome?.requestBody : undefined,
    responseBody: services.settings.GATEWAY_LOG_BODIES ? outcome?.responseBody : undefined,
    source: "gateway",
  };
  await services.logger.write(log);
}

function parseMetadata(value: string | null): Record<string, string> | undefined {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(value);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      return Object.fromEntries(Object.entries(parsed).map(([key, entry]) => [key, String(entry)]));
    }
  } catch {
    // Invalid metadata is rejected by the routing layer before it gets here.
  }
  return undefined;
}

function listHeader(value: string | null): string[] {
  if (!value) return [];
  try {
    const parsed = JSON.parse(value);
    if (Array.isArray(parsed)) return parsed.map(String);
  } catch {
    // comma form
  }
  return value
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
}

function numberOrUndefined(value: string | null): number | undefined {
  return value === null ? undefined : Number(value);
}
