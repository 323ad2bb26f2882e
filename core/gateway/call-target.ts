import { priceUsage } from "../catalog/load.ts";
import { NO_TRUSTED_HOSTS, type TrustedHosts } from "../security/custom-host.ts";
import { mapUpstreamError } from "../providers/errors.ts";
import { loadProvider } from "../providers/registry.ts";
import type { ChatUsage, ProviderTarget, RouteKind, TransformContext } from "../providers/types.ts";
import { UpstreamError } from "../providers/types.ts";
import { gatewayResponse } from "../http/response-headers.ts";
import { SSE_HEADERS } from "../http/sse.ts";
import { attachSseSource, type SseSource, sseResponse } from "../http/sse-source.ts";
import type { InferenceOutcome } from "./outcome.ts";
import { estimateUsage } from "./usage-estimate.ts";
import { redirectError } from "./upstream/failures.ts";
import {
  joinPieces,
  relayPipeline,
  type StreamPiece,
  type StreamPipeline,
  transformPipeline,
} from "./stream-pipelines.ts";
import { StreamTranscript } from "./stream-transcript.ts";
import { JsonText } from "../logs/late-json.ts";
import { requestUpstream } from "./upstream/client.ts";

export interface TargetCall {
  route: RouteKind;
  /** The validated, OpenAI-shaped request body. */
  body: Record<string, any>;
  target: ProviderTarget;
  timeoutMs: number;
  signal: AbortSignal;
  requestId: string;
  outcome: InferenceOutcome & { finish(): void };
  startedAt: number;
  trustedHosts?: TrustedHosts;
  /** A streamed answer needs only its SSE source, no web-stream body (RequestContext.writesSseSources). */
  sourceOnly?: boolean;
}

/**
 * Calls one provider target and answers in OpenAI's shape. Resolves only once the upstream has succeeded:
 * a 2xx JSON body, or for streams the first transformed chunk. Everything before that throws UpstreamError,
 * so a fallback can still move on; after that, errors end the stream with an error event.
 */
export async function callTarget(call: TargetCall): Promise<Response> {
  const adapter = await loadProvider(call.target.provider);
  const routeAdapter = adapter?.routes[call.route];
  if (!adapter || !routeAdapter) {
    throw new UpstreamError(400, `Provider '${call.target.provider}' does not support ${call.route}.`, {
      type: "invalid_request_error",
      code: "unsupported_route",
      param: "x-gateway-provider",
    });
  }
  const stream = call.body.stream === true && routeAdapter.stream !== undefined;
  const ctx: TransformContext = {
    target: applyModelRules(call.target, call.body.model),
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
    if (call.route !== "models") await recordUsage(outcome, call, body.usage, body);
    outcome.status = 200;
    outcome.answeredModel = body.model;
    // Passed through unchanged, the answer is logged as its text (late-json.ts): not serialised again here.
    outcome.responseBody = body === upstreamJson ? new JsonText(text, body) : body;
    outcome.totalMs = performance.now() - call.startedAt;
    outcome.finish();
    // An OpenAI-shaped provider's answer passes through unchanged: send its bytes instead of serialising again.
    return gatewayResponse(body === upstreamJson ? text : JSON.stringify(body), 200, {
      "content-type": "application/json",
      "x-gateway-provider": adapter.id,
    });
  }

  // Streams: decode framing, transform (or relay), and wait for the first chunk before answering (see above).
  // From here the timeout bounds the silence between events, not the whole (possibly long) answer.
  upstream.clearTimer();
  const pipelineOptions = {
    kind: call.route === "completions" ? ("text" as const) : ("chat" as const),
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
  const iterator = pipeline.batches;

  /** What is ready for the client, written (and encoded) once per upstream read. */
  const pending: StreamPiece[] = [];
  let upstreamDone = false;
  try {
    while (pending.length === 0) {
      const next = await iterator.next();
      if (next.done) {
        upstreamDone = true;
        pipeline.end(pending);
        break;
      }
      pipeline.take(next.value, pending);
    }
    // A 200 that ended, or began, with nothing usable: nothing is sent, the target failed (a fallback moves on).
    if (!pipeline.answered()) {
      throw new UpstreamError(502, "The provider answered 200 with a stream that holds no valid event.", {
        code: "invalid_upstream_stream",
        transport: true,
      });
    }
  } catch (error) {
    // Nothing reached the client yet: report it as a transport failure, so a fallback moves on.
    upstream.abort();
    upstream.release();
    await iterator.return?.()?.catch(() => {});
    throw beforeFirstChunk(error);
  }
  outcome.status = 200;

  const finishStream = async () => {
    try {
      upstream.release();
      const usage = pipeline.usage();
      let answer = pipeline.answer();
      // Without reported usage the answer is counted: it is needed now.
      if (!usage && answer instanceof StreamTranscript) answer = answer.assemble();
      outcome.responseBody = answer;
      outcome.responseChars = pipeline.chars();
      await recordUsage(outcome, call, usage, answer as Record<string, any>);
    } finally {
      // Whatever happened above, the log (which waits for `done`) must not wait forever.
      outcome.totalMs = performance.now() - call.startedAt;
      outcome.finish();
    }
  };
  /**
   * Once: the bookkeeping of an ended stream. Started on the next turn of the event loop, so that it (the
   * answer's assembly for the log) runs after the last text is written, not before.
   */
  let finishing: Promise<void> | undefined;
  const finish = () => {
    finishing ??= finishStream().catch((error) =>
      console.error(`[${call.requestId}] stream bookkeeping failed`, error),
    );
    return finishing;
  };
  /** The last text was handed out (the stream ended, failed or was cancelled): next() answers null. */
  let ended = false;
  let cancelled = false;

  const source: SseSource = {
    async next() {
      if (ended) return null;
      try {
        while (pending.length === 0 && !upstreamDone) {
          const next = await iterator.next();
          // Cancelled while waiting: what the reader answers now (its end) is not the provider's end, and must
          // not be logged or counted as if the answer had finished.
          if (cancelled) return null;
          if (next.done) {
            upstreamDone = true;
            pipeline.end(pending);
            break;
          }
          pipeline.take(next.value, pending);
        }
        if (cancelled) return null;
        // One piece per upstream read: each becomes one socket write.
        const text = joinPieces(pending);
        pending.length = 0;
        if (upstreamDone) {
          ended = true;
          setImmediate(finish);
        }
        return text;
      } catch (error) {
        if (cancelled) return null;
        // After the first byte the status is sent: report the failure as a last event and end the stream.
        upstream.abort();
        const failure =
          error instanceof UpstreamError
            ? error
            : new UpstreamError(502, `The provider's stream failed: ${(error as Error).message}`);
        outcome.error = { status: failure.status, message: failure.message, code: failure.code };
        ended = true;
        setImmediate(finish);
        const event = {
          error: { message: failure.message, type: failure.type, param: failure.param, code: failure.code },
        };
        return `data: ${JSON.stringify(event)}\n\n`;
      }
    },
    async cancel() {
      if (ended) return finish();
      // The client went away: stop reading the provider.
      ended = true;
      cancelled = true;
      upstream.abort();
      try {
        await iterator.return?.();
      } finally {
        outcome.error = { status: 499, message: "client closed the stream", code: "client_closed_request" };
        await finish();
      }
    },
  };
  const headers = { ...SSE_HEADERS, "x-gateway-provider": adapter.id };
  return call.sourceOnly
    ? attachSseSource(gatewayResponse(null, 200, headers), source)
    : sseResponse(source, 200, headers);
}

/**
 * A saved integration's model rules: refuses (403, so a fallback moves on) a model the integration does not
 * enable, and adds the model's custom headers to what is sent to the provider.
 */
export function applyModelRules(target: ProviderTarget, model: unknown): ProviderTarget {
  const rules = target.modelRules;
  if (!rules) return target;
  const entry = typeof model === "string" ? rules.models[model] : undefined;
  if (entry ? !entry.enabled : !rules.allowAll) {
    throw new UpstreamError(403, `The model '${String(model)}' is not enabled for this saved provider.`, {
      type: "permission_error",
      code: "model_not_allowed",
      param: "model",
    });
  }
  if (!entry?.headers || Object.keys(entry.headers).length === 0) return target;
  return { ...target, forwardHeaders: { ...entry.headers, ...target.forwardHeaders } };
}

function beforeFirstChunk(error: unknown): UpstreamError {
  if (!(error instanceof UpstreamError)) {
    return new UpstreamError(502, `The provider's stream failed before its first chunk: ${(error as Error).message}`, {
      code: "upstream_stream_failed",
      transport: true,
    });
  }
  if (error.transport || error.status === 499) return error;
  return new UpstreamError(error.status, error.message, {
    type: error.type,
    code: error.code,
    param: error.param,
    headers: error.headers,
    transport: true,
  });
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
  outcome.cost = await priceUsage(call.target.provider, call.body.model, usage);
}
