import { type Pricer, priceMetered, pricerFor } from "../catalog/load.ts";
import type { PriceOverrides } from "../catalog/price-override.ts";
import { NO_TRUSTED_HOSTS, type TrustedHosts } from "../../security/custom-host.ts";
import { mapUpstreamError } from "../../providers/errors.ts";
import { loadProvider } from "../../providers/registry.ts";
import {
  type ChatUsage,
  type ProviderAdapter,
  type ProviderTarget,
  type RouteAdapter,
  type RouteKind,
  type TransformContext,
  MEDIA_ROUTES,
  TextAnswer,
  UpstreamError,
} from "../../providers/types.ts";
import { familyUsageOf } from "./family-usage.ts";
import { relayRawAnswer, relayedHeaders } from "./raw-answer.ts";
import { type UpstreamReply, requestUpstream } from "../../providers/upstream/client.ts";
import type { InferenceOutcome } from "./outcome.ts";
import { estimateUsage } from "./usage-estimate.ts";
import { redirectError } from "../../providers/upstream/failures.ts";
import { loadStrictStreams, relayPipeline, type StreamPipeline, transformPipeline } from "./stream/pipelines.ts";
import { sseAnswer } from "./stream/sse-answer.ts";
import { JsonText } from "../../observe/logs/late-json.ts";
import { loadedFormat } from "../formats/registry.ts";
import { streamFailureEvent } from "../formats/stream-failure.ts";
import { nativeRouteOf, routeAdapterOf } from "../formats/via-chat.ts";
import {
  type ConversationOrigin,
  DROPPED_HISTORY_HEADER,
  droppedHistoryHeader,
  fitHistory,
} from "../formats/history/index.ts";
import { targetKeyOf } from "./target-key.ts";
import type { StreamContinuation } from "./continuation/slot.ts";

export interface TargetCall {
  route: RouteKind;
  /** The validated, OpenAI-shaped request body. */
  body: Record<string, any>;
  /** The target with its model rules applied (applyModelRules: checked before the cache is looked up). */
  target: ProviderTarget;
  timeoutMs: number;
  signal: AbortSignal;
  requestId: string;
  outcome: InferenceOutcome & { finish(): void };
  startedAt: number;
  trustedHosts?: TrustedHosts;
  /** The saved price overrides that apply to this caller and target (core/control/model-pricing/store.ts). */
  prices?: PriceOverrides;
  /** A fallback that continues broken streams: a stream that breaks after its first chunk is handed to it. */
  continuation?: StreamContinuation;
  /** Check the stream for every break (stream/strict-streams.ts): set with `continuation`, and on continuing legs. */
  strict?: boolean;
  /** Responses: the stored conversation at the start of the input, and the target that made it. */
  conversation?: ConversationOrigin;
}

/**
 * Calls one provider target and answers in OpenAI's shape. Resolves only once the upstream has succeeded:
 * a 2xx JSON body, or for streams the first transformed chunk. Everything before that throws UpstreamError,
 * so a fallback can still move on; after that, errors end the stream with an error event.
 */
export async function callTarget(given: TargetCall): Promise<Response> {
  const adapter = await loadProvider(given.target.provider);
  // The conversation as this target may take it (provider-bound items it cannot take back dropped).
  const history = adapter ? historyFor(adapter, given) : undefined;
  const call = history && history.body !== given.body ? { ...given, body: history.body } : given;
  const routeAdapter = adapter && (await routeAdapterOf(adapter, call.route, call.body));
  if (!adapter || !routeAdapter) {
    throw new UpstreamError(400, `Provider '${call.target.provider}' does not support ${call.route}.`, {
      type: "invalid_request_error",
      code: "unsupported_route",
      param: "x-gateway-provider",
    });
  }
  const stream = call.body.stream === true && routeAdapter.stream !== undefined;
  const ctx: TransformContext = {
    target: call.target,
    route: call.route,
    stream,
    model: call.body.model,
    now: Math.floor(Date.now() / 1000),
    requestId: call.requestId,
    includeUsage: call.body.stream_options?.include_usage === true,
    signal: call.signal,
    trustedHosts: call.trustedHosts,
  };
  const { outcome } = call;
  outcome.provider = adapter.id;
  outcome.integrationId = call.target.integrationId;
  if (call.route === "responses") outcome.targetKey = targetKeyOf(call.target);
  const answerHeaders: Record<string, string> = { "x-gateway-provider": adapter.id };
  const dropped = droppedHistoryHeader(history?.dropped);
  if (dropped) answerHeaders[DROPPED_HISTORY_HEADER] = dropped;

  const upstreamRequest = await routeAdapter.buildRequest(call.body, ctx);
  const upstream = await requestUpstream(upstreamRequest, {
    timeoutMs: call.timeoutMs,
    signal: call.signal,
    trusted: call.trustedHosts ?? NO_TRUSTED_HOSTS,
  });
  const response = upstream;
  outcome.upstreamFirstByteMs = performance.now() - call.startedAt;

  if (response.status < 200 || response.status > 299) {
    if (response.status >= 300 && response.status < 400) {
      await upstream.discard();
      throw redirectError(response);
    }
    const text = await upstream.text().catch(() => "");
    const mapped = adapter.mapError?.(response.status, text) ?? mapUpstreamError(response.status, text);
    throw new UpstreamError(response.status, mapped.message, {
      type: mapped.type,
      code: mapped.code,
      param: mapped.param,
      headers: response.headers,
    });
  }

  if (routeAdapter.rawAnswer?.(call.body, ctx)) return relayMediaAnswer(call, adapter.id, routeAdapter, ctx, upstream);

  const answering: Answering = { headers: answerHeaders, routeAdapter, ctx, upstream };
  if (!stream || !routeAdapter.stream) return jsonAnswer(call, answering);
  return streamAnswer(call, answering);
}

/** A target's 2xx answer as it is being answered: who, through which route adapter, from which reply. */
interface Answering {
  /** x-gateway-provider, and x-gateway-dropped-history when the history was fitted to the target. */
  headers: Record<string, string>;
  routeAdapter: RouteAdapter;
  ctx: TransformContext;
  upstream: UpstreamReply;
}

/** A JSON answer: transformed to OpenAI's shape (or passed through unchanged), usage or meters recorded. */
async function jsonAnswer(call: TargetCall, answering: Answering): Promise<Response> {
  const { headers, routeAdapter, ctx, upstream } = answering;
  const { outcome } = call;
  const text = await upstream.text();
  outcome.responseChars = text.length;
  let upstreamJson: unknown;
  try {
    upstreamJson = JSON.parse(text);
  } catch {
    throw new UpstreamError(502, "The provider answered with malformed JSON.", { code: "invalid_upstream_response" });
  }
  const body = routeAdapter.transformResponse(upstreamJson, ctx) as Record<string, any>;
  const format = loadedFormat(call.route);
  if (MEDIA_ROUTES.has(call.route)) await recordMetered(outcome, call, routeAdapter, ctx, upstreamJson, body);
  else if (call.route !== "models") {
    await recordUsage(outcome, call, format ? format.usageOf(body) : body.usage, body);
    // Tokens the gateway counted for an embeddings answer that reported none: the client sees them too.
    if (outcome.usageEstimated && call.route === "embeddings" && body !== upstreamJson && outcome.usage)
      body.usage = { prompt_tokens: outcome.usage.prompt_tokens, total_tokens: outcome.usage.total_tokens };
  }
  outcome.status = 200;
  if (body instanceof TextAnswer) {
    outcome.responseBody = body.text;
    outcome.responseChars = body.text.length;
    outcome.totalMs = performance.now() - call.startedAt;
    outcome.finish();
    return new Response(body.text, {
      status: 200,
      headers: { "content-type": body.contentType, ...headers },
    });
  }
  outcome.answeredModel = typeof body.model === "string" ? body.model : undefined;
  // Passed through unchanged, the answer is logged as its text (late-json.ts): not serialised again here.
  outcome.responseBody = body === upstreamJson ? new JsonText(text, body) : body;
  outcome.totalMs = performance.now() - call.startedAt;
  outcome.finish();
  // An OpenAI-shaped provider's answer passes through unchanged: send its bytes instead of serialising again.
  return new Response(body === upstreamJson ? text : JSON.stringify(body), {
    status: 200,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** A streamed answer: the provider's events decoded, transformed (or relayed) and answered as SSE. */
async function streamAnswer(call: TargetCall, answering: Answering): Promise<Response> {
  const { headers, routeAdapter, ctx, upstream } = answering;
  const { outcome } = call;
  const response = upstream;
  // Streams: decode framing, transform (or relay); the SSE answer waits for the first chunk (see above).
  // From here the timeout bounds the silence between events, not the whole (possibly long) answer.
  upstream.clearTimer();
  // The price is resolved before the first chunk, so the usage chunk can carry the cost as it passes.
  const pricer = await pricerOf(call);
  const pipelineOptions = {
    kind: call.route === "completions" ? ("text" as const) : ("chat" as const),
    costOf: (usage: ChatUsage, serviceTier?: string) => pricer(normalisedUsage(usage), { serviceTier }),
    format: loadedFormat(call.route),
    includeUsage: ctx.includeUsage === true,
    outcome,
    idle: { idleMs: call.timeoutMs, onTimeout: () => upstream.abort() },
    strict: call.strict === true || call.continuation !== undefined ? await loadStrictStreams() : undefined,
  };
  const pipeline: StreamPipeline<unknown> = routeAdapter.stream!.relay
    ? (relayPipeline(response.body, pipelineOptions) as StreamPipeline<unknown>)
    : ((await transformPipeline(
        routeAdapter.stream!.framing,
        routeAdapter.stream!.createTransformer(ctx),
        response.body,
        pipelineOptions,
      )) as StreamPipeline<unknown>);
  return sseAnswer({
    pipeline,
    upstream,
    outcome,
    requestId: call.requestId,
    startedAt: call.startedAt,
    headers,
    failureEvent: (failure) => streamFailureEvent(call.route, failure),
    recordUsage: (usage, answer) => recordUsage(outcome, call, usage, answer, pricer),
    continuation: call.continuation,
  });
}

/** The request as this target may take it: history items bound to another provider or account dropped. */
function historyFor(adapter: ProviderAdapter, call: TargetCall): ReturnType<typeof fitHistory> | undefined {
  const { route, body } = call;
  if (route !== "chat" && route !== "messages" && route !== "responses") return undefined;
  const origin = call.conversation;
  return fitHistory(
    route,
    body,
    {
      native: route === "chat" || nativeRouteOf(adapter, route, body) !== undefined,
      keeps: route === "chat" ? adapter.routes.chat?.keepsHistory?.(String(body.model ?? "")) : undefined,
      madeHistory:
        origin?.target !== undefined && origin.provider === adapter.id && origin.target === targetKeyOf(call.target),
    },
    origin?.items ?? 0,
  );
}

/** The most of a text answer the request log keeps (a transcript); audio is never kept. */
const MAX_LOGGED_TEXT_CHARS = 1_000_000;

/**
 * A 2xx answer that is not JSON (speech audio, text transcripts, streamed transcript events): relayed to the
 * client as it arrives; metered from the request (characters, the audio's duration) once it is over.
 */
async function relayMediaAnswer(
  call: TargetCall,
  provider: string,
  routeAdapter: RouteAdapter,
  ctx: TransformContext,
  upstream: UpstreamReply,
): Promise<Response> {
  const { outcome } = call;
  const headers = relayedHeaders(upstream.headers);
  headers.set("x-gateway-provider", provider);
  const textual = /^(text\/|application\/json)/i.test(headers.get("content-type") ?? "");
  const decoder = textual ? new TextDecoder() : undefined;
  let text = "";
  let bytes = 0;
  const response = await relayRawAnswer(upstream, {
    timeoutMs: call.timeoutMs,
    headers,
    onChunk(chunk) {
      bytes += chunk.byteLength;
      if (decoder && text.length < MAX_LOGGED_TEXT_CHARS) text += decoder.decode(chunk, { stream: true });
    },
    onEnd() {
      outcome.responseChars = bytes;
      outcome.totalMs = performance.now() - call.startedAt;
      if (decoder) outcome.responseBody = text + decoder.decode();
      recordMetered(outcome, call, routeAdapter, ctx, undefined, undefined)
        .catch((error) => console.error(`[${call.requestId}] metering failed`, (error as Error).message))
        .finally(() => outcome.finish());
    },
  });
  outcome.status = 200;
  return response;
}

/** Usage and cost of a family billed by the unit or the token (core/inference/gateway/family-usage.ts, core/inference/catalog/unit-cost.ts). */
async function recordMetered(
  outcome: InferenceOutcome,
  call: TargetCall,
  routeAdapter: RouteAdapter,
  ctx: TransformContext,
  upstreamAnswer: unknown,
  answer: unknown,
): Promise<void> {
  const metered =
    routeAdapter.usageOf?.(upstreamAnswer, call.body, ctx) ?? (await familyUsageOf(call.route, call.body, answer));
  if (!metered) return;
  outcome.usage = metered.usage;
  outcome.units = metered.units;
  if (metered.estimated) outcome.usageEstimated = true;
  const model = String(call.body.model ?? "");
  const override = await call.prices?.(call.target.provider, model);
  outcome.cost = await priceMetered(call.target.provider, model, metered, override);
}

/** The price of the target's model for this caller (an admin's override on top), resolved once for the request. */
async function pricerOf(call: TargetCall): Promise<Pricer> {
  const model = String(call.body.model ?? "");
  return pricerFor(call.target.provider, model, await call.prices?.(call.target.provider, model));
}

/** Usage with every count present (a provider may leave out the completion or the total). */
function normalisedUsage(usage: ChatUsage): ChatUsage {
  const completion = usage.completion_tokens ?? 0;
  return {
    ...usage,
    completion_tokens: completion,
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + completion,
  };
}

/**
 * Normalises reported usage, or counts it when the provider gave none, and prices it (at the service tier the
 * answer reports). A stream passes the pricer its usage chunk was priced with, so both show one cost.
 */
async function recordUsage(
  outcome: InferenceOutcome,
  call: TargetCall,
  reported: ChatUsage | undefined,
  responseBody?: Record<string, any>,
  pricer?: Pricer,
): Promise<void> {
  let usage = reported;
  // An embedding of any input has tokens: 0 is a provider that reports none (Gemini, Vertex): count them.
  const unreported = call.route === "embeddings" && usage?.prompt_tokens === 0;
  if (!usage || typeof usage.prompt_tokens !== "number" || unreported) {
    usage = await estimateUsage(call.route, call.body, responseBody);
    outcome.usageEstimated = true;
  }
  usage = normalisedUsage(usage);
  outcome.usage = usage;
  const serviceTier = typeof responseBody?.service_tier === "string" ? responseBody.service_tier : undefined;
  outcome.cost = (pricer ?? (await pricerOf(call)))(usage, { serviceTier });
}
