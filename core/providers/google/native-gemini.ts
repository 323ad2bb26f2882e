import type { RouteAdapter, StreamTransformer, TransformContext, UpstreamEvent, UpstreamRequest } from "../types.ts";
import { UpstreamError } from "../types.ts";
import { throwIfError } from "./chat.ts";

/**
 * The native `gemini` route (a client's GenerateContentRequest, POST /v1beta/models/{model}:generateContent): the
 * body goes upstream as it is, less the `model` and `stream` the gateway's pipeline reads (the model is in the
 * upstream URL), and the answer comes back as it is: a GenerateContentResponse, or its stream chunks (thought
 * signatures and every field the gateway does not know included). Shared by Google's Gemini API and Vertex AI's
 * Gemini models, which differ in URL and auth only.
 */

type Json = Record<string, any>;

export interface GeminiEndpoint {
  /** The upstream URL of `models/{model}:{method}` (`generateContent`, `streamGenerateContent?alt=sse`). */
  url(ctx: TransformContext, method: string): string;
  headers(ctx: TransformContext): Record<string, string> | Promise<Record<string, string>>;
  /** How errors name the provider. */
  label: string;
  supportsModel?: (model: string) => boolean;
}

/** Google's own token count of a Gemini client's :countTokens body (answers `{totalTokens, ...}`). */
export async function geminiCountTokensRequest(
  endpoint: GeminiEndpoint,
  body: Json,
  ctx: TransformContext,
): Promise<UpstreamRequest> {
  const { model: _model, ...payload } = body;
  return {
    url: endpoint.url(ctx, "countTokens"),
    method: "POST",
    headers: { ...(await endpoint.headers(ctx)), "content-type": "application/json" },
    body: JSON.stringify(payload),
  };
}

export function nativeGeminiRoute(endpoint: GeminiEndpoint): RouteAdapter {
  return {
    supportsModel: endpoint.supportsModel,
    async buildRequest(body, ctx): Promise<UpstreamRequest> {
      const { model: _model, stream: _stream, ...payload } = body;
      return {
        url: endpoint.url(ctx, ctx.stream ? "streamGenerateContent?alt=sse" : "generateContent"),
        method: "POST",
        headers: { ...(await endpoint.headers(ctx)), "content-type": "application/json" },
        body: JSON.stringify(payload),
      };
    },
    transformResponse: (upstream) => fromNativeGemini(upstream, endpoint.label),
    stream: { framing: "sse", createTransformer: () => nativeGeminiStreamTransformer(endpoint.label) },
  };
}

/** A GenerateContentResponse (2xx body) as it is. Throws UpstreamError for an error body or something else. */
export function fromNativeGemini(upstream: unknown, label: string): Json {
  throwIfError(upstream, 502);
  const answer = upstream as Json;
  if (!answer || typeof answer !== "object" || (!Array.isArray(answer.candidates) && !answer.promptFeedback)) {
    throw new UpstreamError(502, `${label} returned an unexpected response body`, { type: "server_error" });
  }
  return answer;
}

/**
 * `streamGenerateContent?alt=sse` chunks, parsed and passed on. An error chunk throws (the client gets the
 * failure in Gemini's shape); a stream that ends before any candidate finished was cut: end() throws.
 */
export function nativeGeminiStreamTransformer(label: string): StreamTransformer {
  let finished = false;
  let failed = false;
  return {
    push(event: UpstreamEvent) {
      const text = event.data.trim();
      if (!text || text === "[DONE]") return [];
      let chunk: Json;
      try {
        chunk = JSON.parse(text);
        throwIfError(chunk, 500);
      } catch (error) {
        failed = true;
        if (error instanceof UpstreamError) throw error;
        throw new UpstreamError(502, `${label} sent an unreadable stream event: ${text.slice(0, 200)}`, {
          type: "server_error",
          code: "bad_upstream_stream",
        });
      }
      const candidates: Json[] = Array.isArray(chunk.candidates) ? chunk.candidates : [];
      if (
        candidates.some((candidate) => typeof candidate?.finishReason === "string") ||
        chunk.promptFeedback?.blockReason
      )
        finished = true;
      return [chunk];
    },
    end() {
      if (!finished && !failed) {
        throw new UpstreamError(502, `${label} stream ended before a candidate finished`, {
          type: "server_error",
          code: "incomplete_stream",
        });
      }
      return [];
    },
  };
}
