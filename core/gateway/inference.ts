import type { z } from "zod";
import type { RequestContext } from "../http/context.ts";
import { HttpError, badRequest } from "../http/errors.ts";
import { gatewayHeader } from "../http/gateway-headers.ts";
import { readJson, validate } from "../http/json.ts";
import type { RouteKind } from "../providers/types.ts";
import { UpstreamError } from "../providers/types.ts";
import { callTarget } from "./call-target.ts";
import { newOutcome } from "./outcome.ts";
import { targetFromHeaders } from "./target-from-headers.ts";

/**
 * The data-plane pipeline for OpenAI-shaped inference routes: validate the body, resolve the provider,
 * call it, answer in OpenAI's shape. The outcome (usage, cost, timings) is left on ctx.outcome.
 */
export async function handleInference<T extends z.ZodType>(
  route: RouteKind,
  request: Request,
  ctx: RequestContext,
  schema: T,
  normalise: (body: z.infer<T>) => Record<string, any> = (body) => body as Record<string, any>,
): Promise<Response> {
  const body = normalise(validate(schema, await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES)));
  const target = await targetFromHeaders(request.headers, ctx.services.trustedHosts);
  if (!target) {
    throw badRequest(
      "No provider selected: send x-gateway-provider with Authorization, or x-gateway-config.",
      "x-gateway-provider",
      "missing_provider",
    );
  }
  const outcome = newOutcome(route, String(body.model), body.stream === true);
  ctx.outcome = outcome;
  try {
    return await callTarget({
      route,
      body,
      target,
      timeoutMs: requestTimeoutMs(request.headers, ctx.services.settings.REQUEST_TIMEOUT),
      signal: ctx.signal,
      requestId: `chatcmpl-${ctx.traceId.replace(/-/g, "").slice(0, 24)}`,
      outcome,
      startedAt: ctx.startedAt,
    });
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    outcome.status = error.status;
    outcome.error = { status: error.status, message: error.message, code: error.code };
    outcome.finish();
    throw upstreamToHttp(error, target.provider);
  }
}

/** `x-gateway-request-timeout` (ms) bounded by the deployment's REQUEST_TIMEOUT. */
export function requestTimeoutMs(headers: Headers, fallback: number): number {
  const header = gatewayHeader(headers, "request-timeout");
  if (header === null) return fallback;
  const value = Number(header);
  if (!Number.isInteger(value) || value <= 0) {
    throw badRequest(
      "x-gateway-request-timeout must be a positive integer of milliseconds.",
      "x-gateway-request-timeout",
      "invalid_header",
    );
  }
  return value;
}

export function upstreamToHttp(error: UpstreamError, provider: string): HttpError {
  const status = error.status >= 400 && error.status <= 599 ? error.status : 502;
  return new HttpError(status, error.message, {
    type: error.type,
    code: error.code,
    param: error.param,
    headers: { "x-gateway-provider": provider },
  });
}
