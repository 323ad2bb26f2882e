import type { ProviderAdapter, TransformContext } from "../types.ts";
import { joinUrl } from "../url.ts";
import { fromCohereChatResponse, toCohereChatRequest } from "./chat.ts";
import { fromCohereEmbedResponse, toCohereEmbedRequest } from "./embed.ts";
import { COHERE_BASE_URL } from "./base-url.ts";
import { coherePassthrough } from "./passthrough.ts";
import { cohereRerankRoute } from "./rerank.ts";
import { createCohereStreamTransformer } from "./stream.ts";

function headers(ctx: TransformContext, stream = false): Record<string, string> {
  return {
    ...(ctx.target.apiKey ? { authorization: `Bearer ${ctx.target.apiKey}` } : {}),
    ...ctx.target.forwardHeaders,
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
  };
}

/** Remembers the client's requested embedding encoding between buildRequest and transformResponse. */
const embeddingEncoding = new WeakMap<TransformContext, string>();

export const cohereAdapter: ProviderAdapter = {
  id: "cohere",
  name: "Cohere",
  routes: {
    chat: {
      buildRequest(body, ctx) {
        return {
          url: joinUrl(ctx.target.customHost ?? COHERE_BASE_URL, "/v2/chat"),
          method: "POST",
          headers: headers(ctx, ctx.stream),
          body: JSON.stringify(toCohereChatRequest(body, ctx)),
        };
      },
      transformResponse: (upstream, ctx) => fromCohereChatResponse(upstream, ctx),
      stream: { framing: "sse", createTransformer: createCohereStreamTransformer },
    },
    embeddings: {
      buildRequest(body, ctx) {
        if (typeof body.encoding_format === "string") embeddingEncoding.set(ctx, body.encoding_format);
        return {
          url: joinUrl(ctx.target.customHost ?? COHERE_BASE_URL, "/v2/embed"),
          method: "POST",
          headers: headers(ctx),
          body: JSON.stringify(toCohereEmbedRequest(body, ctx)),
        };
      },
      transformResponse: (upstream, ctx) => fromCohereEmbedResponse(upstream, ctx, embeddingEncoding.get(ctx)),
    },
    rerank: cohereRerankRoute(COHERE_BASE_URL, (ctx) => headers(ctx)),
  },
  passthrough: coherePassthrough,
};
