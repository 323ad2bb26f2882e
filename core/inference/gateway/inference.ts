import type * as z from "zod";
import { priceOverridesFor } from "../../control/model-pricing/store.ts";
import type { RequestContext, RouteInference } from "../../services.ts";
import { withHeaders } from "../../http/response-headers.ts";
import { HttpError } from "../../http/errors.ts";
import { readJson, type Schema, validate } from "../../http/json.ts";
import type { ProviderTarget, RouteKind } from "../../providers/types.ts";
import type { ConfigNode, LeafNode } from "../routing/config.ts";
import { RoutingFailure, runStrategy } from "../routing/engine.ts";
import { applyParams } from "../routing/params.ts";
import { requireRouting } from "../routing/source.ts";
import { reservationFor } from "../policies/reservation.ts";
import { refuseUnpriced } from "../policies/unpriced.ts";
import { cachedInference, type Embedder } from "../cache/inference-cache.ts";
import { logRequest } from "../../observe/logs/log-request.ts";
import { InferenceGuardrails } from "../guardrails/pipeline.ts";
import { guardrailFreeContext } from "../guardrails/resolve.ts";
import { callTarget } from "./call-target.ts";
import { ContinuationOffer } from "./continuation/offer.ts";
import type { ContinuationSetup, PreparedLeg } from "./continuation/setup.ts";
import type { ConversationOrigin } from "../formats/history/index.ts";
import { applyModelRules } from "./model-rules.ts";
import { costHeaders } from "./cost-on-answer.ts";
import { targetKeyOf } from "./target-key.ts";
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
import { answerKeyOf } from "./answer-key.ts";

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
  return runInference(route, body, request, ctx, `req-${answerKeyOf(ctx)}`);
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
  requestId = `chatcmpl-${answerKeyOf(ctx)}`,
  /** An outcome made beforehand (a background response's, which the request log already waits for). */
  outcome = newOutcome(route, String(body.model), body.stream === true),
): Promise<Response> {
  const config = await requireRouting(gatewayHeadersOf(request, ctx), ctx);
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
export const routeInference: RouteInference = async (route, body, config, request, ctx, outcome, requestId) => {
  const gateway = gatewayHeadersOf(request, ctx);
  const resolver = new LeafResolver(request, gateway, ctx);
  const guardrails = new InferenceGuardrails(route, request, ctx, outcome, requestId);
  const queryContext = () => ({
    metadata: gateway.metadata ?? {},
    params: body,
    url: { pathname: ctx.path ?? new URL(request.url).pathname },
  });
  const pricesFor = (target: ProviderTarget) =>
    ctx.principal ? priceOverridesFor(ctx.services.stores.records, ctx.principal, target.integrationId) : undefined;
  // A fallback that continues broken streams: offered to the stream, armed once the strategy answered.
  const continuation = continuesStreams(route, body, config)
    ? streamContinuation(route, body, { ctx, outcome, requestId, queryContext, resolver, guardrails, pricesFor })
    : undefined;
  let provider: string | undefined;
  try {
    const origin = ctx.conversation;
    const result = await runStrategy(config, {
      signal: ctx.signal,
      queryContext,
      prefers: origin?.target ? affinity(origin, resolver) : undefined,
      async call(leaf, retry) {
        const resolved = await resolver.resolve(leaf);
        provider = resolved.target.provider;
        const params = applyParams(body, leaf.settings);
        const providerId = resolved.target.provider;
        // Pipeline step 3: usage and rate limits, once per request (a 429 here ends the request, no fallback).
        // Token and cost limits reserve the request's estimated usage, settled when the outcome is done.
        await ctx.services.policies?.admitRequest(ctx, provider, () => reservationFor(route, params, providerId));
        const prices = pricesFor(resolved.target);
        await refuseUnpricedUnderCostLimits(ctx, providerId, params.model, prices);
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
              prices,
              continuation,
              conversation: origin,
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
    if (continuation && result.rest)
      continuation.arm({ rest: result.rest, from: { provider: provider ?? "", target: result.leaf.path } });
    // Pipeline step 7: the answering target's output guardrails on its answer.
    const response = await guardrails.output(result.leaf.settings, result.response);
    return withHeaders(response, {
      ...routingHeaders(result.leaf.path, result.retries, provider, outcome.cacheStatus),
      ...ctx.services.policies?.headersFor(ctx),
      // A JSON answer's cost is known now; a stream's comes with its usage (cost-on-answer.ts).
      ...(outcome.stream ? undefined : costHeaders(outcome.cost, outcome.cacheSavedCost)),
    });
  } catch (error) {
    recordFailure(outcome, error);
    if (error instanceof RoutingFailure) throw upstreamToHttp(error.error, failureHeaders(error, provider));
    throw error;
  }
};

/** Affinity: a Responses chain goes back to the target that made its stored conversation while it can. */
function affinity(origin: ConversationOrigin, resolver: LeafResolver): (leaf: LeafNode) => Promise<boolean> {
  return async (leaf) => {
    const { target } = await resolver.resolve(leaf);
    return target.provider === origin.provider && targetKeyOf(target) === origin.target;
  };
}

/**
 * The continuation a streamed request offers its stream: the targets after the answering one are prepared the
 * way the request's own calls are (resolved, the leaf's params applied, its input guardrails run), without a
 * second admission (the request was admitted once; its limits settle every leg).
 */
function streamContinuation(
  route: "chat" | "responses" | "messages",
  body: Record<string, any>,
  parts: {
    ctx: RequestContext;
    outcome: InferenceOutcome & { finish(): void };
    requestId: string;
    queryContext: ContinuationSetup["queryContext"];
    resolver: LeafResolver;
    guardrails: InferenceGuardrails;
    pricesFor(target: ProviderTarget): PreparedLeg["prices"];
  },
): ContinuationOffer {
  const { ctx, resolver, guardrails } = parts;
  return new ContinuationOffer({
    route,
    body,
    outcome: parts.outcome,
    requestId: parts.requestId,
    startedAt: ctx.startedAt,
    signal: ctx.signal,
    trustedHosts: ctx.services.trustedHosts,
    includeUsage: body.stream_options?.include_usage === true,
    queryContext: parts.queryContext,
    async prepare(leaf) {
      const resolved = await resolver.resolve(leaf);
      const guarded = await guardrails.input(leaf.settings, applyParams(body, leaf.settings));
      if (guarded.answer) throw new HttpError(446, "A guardrail refused the request for the continuing target.");
      // A model the saved integration does not enable is refused (403): the fallback moves on.
      const target = applyModelRules(resolved.target, guarded.body.model);
      const prices = parts.pricesFor(target);
      await refuseUnpricedUnderCostLimits(ctx, target.provider, guarded.body.model, prices);
      return { target, timeoutMs: resolved.timeoutMs, body: guarded.body, prices };
    },
  });
}

/**
 * Under a cost limit, a target whose model has no price is refused as a failed target (a fallback moves on),
 * unless the limit allows or estimates unpriced models (policies/unpriced.ts).
 */
async function refuseUnpricedUnderCostLimits(
  ctx: RequestContext,
  provider: string,
  model: unknown,
  prices: PreparedLeg["prices"],
): Promise<void> {
  const refusing = ctx.services.policies?.refusesUnpriced(ctx);
  if (!refusing) return;
  const named = String(model ?? "");
  await refuseUnpriced(refusing, provider, named, await prices?.(provider, named));
}

/** Whether a request's stream may be continued: a streamed chat, Responses or Messages request whose config says so. */
function continuesStreams(
  route: RouteKind,
  body: Record<string, any>,
  config: ConfigNode,
): route is "chat" | "responses" | "messages" {
  return (
    config.hasStreamContinuation === true &&
    body.stream === true &&
    (route === "chat" || route === "responses" || route === "messages")
  );
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
