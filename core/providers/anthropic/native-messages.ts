import {
  type TypedEvent,
  type RouteAdapter,
  type StreamTransformer,
  type UpstreamEvent,
  UpstreamError,
} from "../types.ts";
import { anthropicUpstreamError, isAnthropicError } from "./errors.ts";
import { anthropicHeaders, anthropicUrl } from "./http.ts";

/**
 * The native `messages` route (POST /v1/messages in Anthropic's own format): the client's body goes upstream as
 * it is (model as resolved, `stream` as the gateway streams), and the answer comes back as it is, a Message or
 * its stream events (`ping` included). Bedrock's and Vertex AI's Claude routes share the answer side.
 */

/** Bedrock adds its own metrics to the last event (and may to a Message); the client asked Anthropic's shape. */
const BEDROCK_METRICS = "amazon-bedrock-invocationMetrics";

/** A native Message (2xx body) as it is. Throws UpstreamError for an error body or something that is no Message. */
export function fromNativeMessage(upstream: any, label = "anthropic"): Record<string, any> {
  if (isAnthropicError(upstream)) throw anthropicUpstreamError(upstream);
  if (!upstream || typeof upstream !== "object" || !Array.isArray(upstream.content)) {
    throw new UpstreamError(502, `${label} returned an unexpected response body`, { type: "server_error" });
  }
  if (!(BEDROCK_METRICS in upstream)) return upstream;
  const { [BEDROCK_METRICS]: _metrics, ...message } = upstream;
  return message;
}

/** One parsed stream event -> the event to send on. Throws UpstreamError for an `error` event. */
export function nativeMessagesEvent(data: unknown, label = "anthropic"): TypedEvent {
  if (isAnthropicError(data)) throw anthropicUpstreamError(data);
  if (!data || typeof data !== "object" || typeof (data as { type?: unknown }).type !== "string") {
    throw new UpstreamError(502, `${label} sent a stream event without a type`, {
      type: "server_error",
      code: "bad_upstream_stream",
    });
  }
  const event = data as TypedEvent;
  if (!(BEDROCK_METRICS in event)) return event;
  const { [BEDROCK_METRICS]: _metrics, ...rest } = event;
  return rest as TypedEvent;
}

/** The JSON text of an SSE event (undefined: nothing to send, e.g. a `[DONE]` some proxies add). */
function sseData(event: UpstreamEvent): string | undefined {
  return event.data && event.data !== "[DONE]" ? event.data : undefined;
}

/**
 * Upstream stream events -> Anthropic events, parsed and passed on. `payloadOf` gives the JSON text of one
 * Anthropic event carried by an upstream event (SSE data by default; Bedrock unwraps its base64 chunks). A
 * stream that ends before `message_stop` was cut: end() throws, so the client is told instead of left waiting.
 */
export function createNativeMessagesStreamTransformer(
  label = "anthropic",
  payloadOf: (event: UpstreamEvent) => string | undefined = sseData,
): StreamTransformer {
  let stopped = false;
  let failed = false;

  const eventOf = (event: UpstreamEvent): TypedEvent | undefined => {
    const text = payloadOf(event);
    if (text === undefined) return undefined;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new UpstreamError(502, `${label} sent an unreadable stream event: ${text.slice(0, 200)}`, {
        type: "server_error",
        code: "bad_upstream_stream",
      });
    }
    // An SSE `error` event is an error whatever its data looks like.
    if (event.event === "error") throw anthropicUpstreamError(data as { error?: { type?: string; message?: string } });
    return nativeMessagesEvent(data, label);
  };

  return {
    push(event) {
      if (stopped) return [];
      let out: TypedEvent | undefined;
      try {
        out = eventOf(event);
      } catch (error) {
        failed = true;
        throw error;
      }
      if (!out) return [];
      if (out.type === "message_stop") stopped = true;
      return [out];
    },
    end() {
      if (!stopped && !failed) {
        throw new UpstreamError(502, `${label} stream ended before message_stop`, {
          type: "server_error",
          code: "incomplete_stream",
        });
      }
      return [];
    },
  };
}

export const anthropicMessagesRoute: RouteAdapter = {
  buildRequest(body, ctx) {
    const { stream: _stream, ...rest } = body;
    const payload: Record<string, unknown> = { ...rest, model: ctx.model || body.model };
    if (ctx.stream) payload.stream = true;
    return {
      url: anthropicUrl(ctx, "/messages"),
      method: "POST",
      headers: { ...anthropicHeaders(ctx), "content-type": "application/json" },
      body: JSON.stringify(payload),
    };
  },
  transformResponse: (upstream) => fromNativeMessage(upstream),
  stream: { framing: "sse", createTransformer: () => createNativeMessagesStreamTransformer() },
};
