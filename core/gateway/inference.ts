import type * as z from "zod";
import { priceOverridesFor } from "../control/model-pricing.ts";
import type { RequestContext } from "../http/context.ts";
import { withHeaders } from "../http/response-headers.ts";
import { badRequest } from "../http/errors.ts";
import { readJson, type Schema, validate } from "../http/json.ts";
import type { RouteKind } from "../providers/types.ts";
import type { ConfigNode } from "../routing/config.ts";
import { RoutingFailure, runStrategy } from "../routing/engine.ts";
import { applyParams } from "../routing/params.ts";
import { resolveRouting } from "../routing/source.ts";
import { reservationFor } from "../policies/reservation.ts";
import { cachedInference, type Embedder } from "../cache/inference-cache.ts";
import { logRequest } from "../logs/log-request.ts";
import { InferenceGuardrails } from "../guardrails/pipeline.ts";
import { guardrailFreeContext } from "../guardrails/resolve.ts";
import { callTarget } from "./call-target.ts";
import { applyModelRules } from "./model-rules.ts";
import { type InferenceOutcome, newOutcome } from "./outcome.ts";
import {
  LeafResolver,
  failureHeaders,
  gatewayHeadersOf,
  recordedAttempt,
  recordFailure,
  routingHeaders,
  upstreamToHttp,
} from "./plan.ts";

export { upstreamToHttp } from "./plan.ts";

/**
 * The data-plane pipeline for OpenAI-shaped inference routes: validate the body, resolve the routing (config,
 * provider headers or workspace default), run the strategy engine over it, answer in OpenAI's shape with the
 * routing headers. The outcome (usage, cost, timings, attempts) is left on ctx.outcome.
 */
export async function handleInference<T extends Schema>(
  route: RouteKind,
  request: Request,
  ctx: RequestContext,
  schema: T,
  normalise: (body: z.core.output<T>) => Record<string, any> = (body) => body as Record<string, any>,
  /** A cheaper check that accepts the common bodies of this route (else undefined: the schema decides). */
  accept?: (json: unknown) => z.core.output<T> | undefined,
): Promise<Response> {
  const json = await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  const body = normalise(accept?.(json) ?? validate(schema, json));
  return runInference(route, body, request, ctx);
}

/**
 * The pipeline for a multipart inference route (image edits and variations, audio transcriptions and
 * translations): the form read into an object (files held in memory, bounded by GATEWAY_MAX_UPLOAD_BYTES), then
 * validated by the family's schema and run like a JSON body.
 */
export async function handleMultipartInference<T extends Schema>(
  route: RouteKind,
  request: Request,
  ctx: RequestContext,
  schema: T,
): Promise<Response> {
  // Loaded on first use: the form parser (busboy) is 23 KB that no JSON route's cold start needs.
  const { readMultipartBody } = await import("./multipart-body.ts");
  const form = await readMultipartBody(request, ctx.services.settings.GATEWAY_MAX_UPLOAD_BYTES);
  const body = validate(schema, form) as Record<string, any>;
  return runInference(route, body, request, ctx, `req-${ctx.traceId.replace(/-/g, "").slice(0, 24)}`);
}

/**
 * Runs a validated body of an inference route: resolves the routing, starts the outcome (left on ctx.outcome)
 * and runs the strategy engine. `requestId` names the answers the gateway makes (`chatcmpl-...` by default).
 */
export async function runInference(
  route: RouteKind,
  body: Record<string, any>,
  request: Request,
  ctx: RequestContext,
  requestId = `chatcmpl-${ctx.traceId.replace(/-/g, "").slice(0, 24)}`,
  /** An outcome made beforehand (a background response's, which the request log already waits for). */
  outcome = newOutcome(route, String(body.model), body.stream === true),
): Promise<Response> {
  const config = await resolveRouting(gatewayHeadersOf(request, ctx), ctx);
  if (!config) {
    throw badRequest(
      "No provider selected: send x-gateway-provider with Authorization, or x-gateway-config.",
      "x-gateway-provider",
      "missing_provider",
    );
  }
  outcome.requestBody = body;
  // Without a content-length (a chunked upload) the size stays unknown and the logger measures the body.
  const declaredLength = request.headers.get("content-length");
  if (declaredLength) {
    const bytes = Number(declaredLength);
    if (Number.isInteger(bytes) && bytes >= 0) outcome.requestChars = bytes;
  }
  ctx.outcome = outcome;
  return routeInference(route, body, config, request, ctx, outcome, requestId);
}

/** Runs the strategy engine for an inference route; each leaf call is one callTarget. */
export async function routeInference(
  route: RouteKind,
  body: Record<string, any>,
  config: ConfigNode,
  request: Request,
  ctx: RequestContext,
  outcome: InferenceOutcome & { finish(): void },
  requestId: string,
): Promise<Response> {
  const gateway = gatewayHeadersOf(request, ctx);
  const resolver = new LeafResolver(request, gateway, ctx);
  const guardrails = new InferenceGuardrails(route, request, ctx, outcome, requestId);
  let provider: string | undefined;
  try {
    const result = await runStrategy(config, {
      signal: ctx.signal,
      queryContext: () => ({
        metadata: gateway.metadata ?? {},
        params: body,
        url: { pathname: ctx.path ?? new URL(request.url).pathname },
      }),
      async call(leaf, retry) {
        const resolved = await resolver.resolve(leaf);
        provider = resolved.target.provider;
        const params = applyParams(body, leaf.settings);
        const providerId = resolved.target.provider;
        // Pipeline step 3: usage and rate limits, once per request (a 429 here ends the request, no fallback).
        // Token and cost limits reserve the request's estimated usage, settled when the outcome is done.
        await ctx.services.policies?.admitRequest(ctx, provider, () => reservationFor(route, params, providerId));
        // Pipeline step 4: the target's input guardrails, once each per request. A denial is the answer: no
        // provider is called and no fallback follows. A redaction is what the provider and the cache see.
        const guarded = await guardrails.input(leaf.settings, params);
        if (guarded.answer) return guarded.answer;
        const sent = guarded.body;
        // Pipeline step 5: the cache answers a hit without calling the provider, and stores a success. The saved
        // integration's model rules come first: a model disabled after its answer was cached is refused (403,
        // so a fallback moves on), never answered from the cache.
        return recordedAttempt(outcome, { path: leaf.path, provider, retry }, () => {
          const target = applyModelRules(resolved.target, sent.model);
          const upstream = () =>
            callTarget({
              route,
              body: sent,
              target,
              timeoutMs: resolved.timeoutMs,
              signal: ctx.signal,
              requestId,
              outcome,
              startedAt: ctx.startedAt,
              trustedHosts: ctx.services.trustedHosts,
              prices: ctx.principal
                ? priceOverridesFor(ctx.services.stores.records, ctx.principal, target.integrationId)
                : undefined,
            });
          return cachedInference(
            {
              ctx,
              family: route,
              settings: leaf.settings.cache,
              target,
              body: sent,
              outcome,
              embed: leaf.settings.cache?.mode === "semantic" ? gatewayEmbedder(request, ctx) : undefined,
            },
            upstream,
          );
        });
      },
    });
    outcome.retries = result.retries;
    outcome.lastUsedOptionIndex = result.leaf.path;
    // Pipeline step 7: the answering target's output guardrails on its answer.
    const response = await guardrails.output(result.leaf.settings, result.response);
    return withHeaders(response, {
      ...routingHeaders(result.leaf.path, result.retries, provider, outcome.cacheStatus),
      ...ctx.services.policies?.headersFor(ctx),
    });
  } catch (error) {
    recordFailure(outcome, error);
    if (error instanceof RoutingFailure) throw upstreamToHttp(error.error, failureHeaders(error, provider));
    throw error;
  }
}

/**
 * The semantic cache's embedder: the text is embedded by the configured embedding target through this same
 * pipeline (routing, credentials, retries, usage and cost), logged as an embeddings request of its own. A
 * failure leaves the request uncached by meaning (undefined), never failed.
 */
function gatewayEmbedder(request: Request, ctx: RequestContext): Embedder {
  return async (config, model, text) => {
    const outcome = newOutcome("embeddings", model, false);
    const body = { model, input: text, encoding_format: "float" };
    outcome.requestBody = body;
    let response: Response;
    try {
      // The text was judged as the request's input already: the embedding call runs no guardrails of its own.
      const embedCtx = guardrailFreeContext(ctx);
      response = await routeInference("embeddings", body, config, request, embedCtx, outcome, `emb-${ctx.traceId}`);
    } catch (error) {
      response = new Response(null, { status: (error as { status?: number }).status ?? 502 });
      console.error(`[${ctx.traceId}] semantic cache: the embedding call failed`, (error as Error).message);
    }
    if (ctx.principal) ctx.waitUntil(logRequest(request, response, { path: "/v1/embeddings" }, ctx, outcome));
    if (response.status !== 200) return undefined;
    await response.body?.cancel().catch(() => {});
    const answer = outcome.responseBody as { toJSON?: () => unknown } | undefined;
    const json = (typeof answer?.toJSON === "function" ? answer.toJSON() : answer) as
      | { data?: Array<{ embedding?: unknown }> }
      | undefined;
    const embedding = json?.data?.[0]?.embedding;
    if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === "number"))
      return undefined;
    return Float32Array.from(embedding as number[]);
  };
}
