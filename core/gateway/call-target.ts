import { priceMetered, priceUsage } from "../catalog/load.ts";
import type { PriceOverrides } from "../catalog/price-override.ts";
import { NO_TRUSTED_HOSTS, type TrustedHosts } from "../security/custom-host.ts";
import { mapUpstreamError } from "../providers/errors.ts";
import { loadProvider } from "../providers/registry.ts";
import type { ChatUsage, ProviderTarget, RouteAdapter, RouteKind, TransformContext } from "../providers/types.ts";
import { MEDIA_ROUTES, TextAnswer, UpstreamError } from "../providers/types.ts";
import { familyUsageOf } from "./family-usage.ts";
import { relayRawAnswer, relayedHeaders } from "./upstream/raw-answer.ts";
import type { UpstreamReply } from "./upstream/client.ts";
import type { InferenceOutcome } from "./outcome.ts";
import { estimateUsage } from "./usage-estimate.ts";
import { redirectError } from "./upstream/failures.ts";
import { relayPipeline, type StreamPipeline, transformPipeline } from "./stream/pipelines.ts";
import { sseAnswer } from "./stream/sse-answer.ts";
import { JsonText } from "../logs/late-json.ts";
import { requestUpstream } from "./upstream/client.ts";
import { loadedFormat } from "../formats/registry.ts";
import { streamFailureEvent } from "../formats/stream-failure.ts";
import { routeAdapterOf } from "../formats/via-chat.ts";

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
  /** The saved price overrides that apply to this caller and target (core/control/model-pricing.ts). */
  prices?: PriceOverrides;
}

/**
 * Calls one provider target and answers in OpenAI's shape. Resolves only once the upstream has succeeded:
 * a 2xx JSON body, or for streams the first transformed chunk. Everything before that throws UpstreamError,
 * so a fallback can still move on; after that, errors end the stream with an error event.
 */
export async function callTarget(call: TargetCall): Promise<Response> {
  const adapter = await loadProvider(call.target.provider);
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

  if (!stream || !routeAdapter.stream) {
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
    else if (call.route !== "models")
      await recordUsage(outcome, call, format ? format.usageOf(body) : body.usage, body);
    outcome.status = 200;
    if (body instanceof TextAnswer) {
      outcome.responseBody = body.text;
      outcome.responseChars = body.text.length;
      outcome.totalMs = performance.now() - call.startedAt;
      outcome.finish();
      return new Response(body.text, {
        status: 200,
        headers: { "content-type": body.contentType, "x-gateway-provider": adapter.id },
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
      headers: { "content-type": "application/json", "x-gateway-provider": adapter.id },
    });
  }

  // Streams: decode framing, transform (or relay); the SSE answer waits for the first chunk (see above).
  // From here the timeout bounds the silence between events, not the whole (possibly long) answer.
  upstream.clearTimer();
  const pipelineOptions = {
    kind: call.route === "completions" ? ("text" as const) : ("chat" as const),
    format: loadedFormat(call.route),
    includeUsage: ctx.includeUsage === true,
    outcome,
    idle: { idleMs: call.timeoutMs, onTimeout: () => upstream.abort() },
  };
  const pipeline: StreamPipeline<unknown> = routeAdapter.stream.relay
    ? (relayPipeline(response.body, pipelineOptions) as StreamPipeline<unknown>)
    : ((await transformPipeline(
        routeAdapter.stream.framing,
        routeAdapter.stream.createTransformer(ctx),
        response.body,
        pipelineOptions,
      )) as StreamPipeline<unknown>);
  return sseAnswer({
    pipeline,
    upstream,
    outcome,
    requestId: call.requestId,
    startedAt: call.startedAt,
    headers: { "x-gateway-provider": adapter.id },
    failureEvent: (failure) => streamFailureEvent(call.route, failure),
    recordUsage: (usage, answer) => recordUsage(outcome, call, usage, answer),
  });
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

/** Usage and cost of a family billed by the unit or the token (core/gateway/family-usage.ts, core/catalog/unit-cost.ts). */
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

/** Normalises reported usage, or counts it when the provider gave none, and prices it from the catalog. */
async function recordUsage(
  outcome: InferenceOutcome,
  call: TargetCall,
  reported: ChatUsage | undefined,
  responseBody?: Record<string, any>,
): Promise<void> {
  let usage = reported;
  if (!usage || typeof usage.prompt_tokens !== "number") {
    usage = await estimateUsage(call.route, call.body, responseBody);
    outcome.usageEstimated = true;
  }
  usage = {
    ...usage,
    completion_tokens: usage.completion_tokens ?? 0,
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + (usage.completion_tokens ?? 0),
  };
  outcome.usage = usage;
  const override = await call.prices?.(call.target.provider, call.body.model);
  outcome.cost = await priceUsage(call.target.provider, call.body.model, usage, override);
}
