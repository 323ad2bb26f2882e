import { GEMINI_HISTORY, type ProviderAdapter, type TransformContext, UpstreamError } from "../types.ts";
import { joinUrl } from "../url.ts";
import { createGeminiStreamTransformer, fromGeminiResponse, toGeminiRequest } from "./chat.ts";
import { fromBatchEmbedResponse, rememberEncoding, toBatchEmbedRequest } from "./embeddings.ts";
import { geminiApiBase } from "./api-base.ts";
import { type GeminiEndpoint, geminiCountTokensRequest, nativeGeminiRoute } from "./native-gemini.ts";
import { googlePassthrough } from "./passthrough.ts";

/**
 * Google Gemini API (Google AI Studio keys): generateContent (chat translated, and a Gemini client's own body
 * natively), batchEmbedContents and the models list.
 */

/** `gemini-2.5-flash` / `models/gemini-2.5-flash` -> `models/gemini-2.5-flash`; tuned models keep their prefix. */
export function geminiModelName(model: string): string {
  const name = model.startsWith("models/") || model.startsWith("tunedModels/") ? model : `models/${model}`;
  const segments = name.split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
    throw new UpstreamError(400, `Invalid model name ${JSON.stringify(model)}`, { param: "model" });
  }
  return segments.map(encodeURIComponent).join("/");
}

function headers(ctx: TransformContext, json: boolean): Record<string, string> {
  const result: Record<string, string> = {};
  if (ctx.target.apiKey) result["x-goog-api-key"] = ctx.target.apiKey;
  if (json) result["content-type"] = "application/json";
  return { ...result, ...ctx.target.forwardHeaders };
}

/** Where a Gemini client's own body goes on the Gemini API (native `gemini` route and :countTokens). */
const GOOGLE_GEMINI: GeminiEndpoint = {
  url: (ctx, method) => joinUrl(geminiApiBase(ctx), `${geminiModelName(ctx.model)}:${method}`),
  headers: (ctx) => headers(ctx, false),
  label: "Google Gemini",
};

/** The Gemini API's own token count of a Gemini client's :countTokens body. */
export const googleCountTokensRequest = (body: Record<string, any>, ctx: TransformContext) =>
  geminiCountTokensRequest(GOOGLE_GEMINI, body, ctx);

export const googleAdapter: ProviderAdapter = {
  id: "google",
  name: "Google Gemini",
  routes: {
    chat: {
      continuesAssistantTurn: true,
      keepsHistory: () => GEMINI_HISTORY,
      buildRequest(body, ctx) {
        const method = ctx.stream ? "streamGenerateContent?alt=sse" : "generateContent";
        return {
          url: joinUrl(geminiApiBase(ctx), `${geminiModelName(ctx.model)}:${method}`),
          method: "POST",
          headers: headers(ctx, true),
          body: JSON.stringify(toGeminiRequest(body, ctx.model)),
        };
      },
      transformResponse: fromGeminiResponse,
      stream: { framing: "sse", createTransformer: createGeminiStreamTransformer },
    },
    gemini: nativeGeminiRoute(GOOGLE_GEMINI),
    embeddings: {
      buildRequest(body, ctx) {
        rememberEncoding(ctx, body);
        const model = geminiModelName(ctx.model);
        return {
          url: joinUrl(geminiApiBase(ctx), `${model}:batchEmbedContents`),
          method: "POST",
          headers: headers(ctx, true),
          body: JSON.stringify(toBatchEmbedRequest(body, decodeURIComponent(model))),
        };
      },
      transformResponse: fromBatchEmbedResponse,
    },
    models: {
      buildRequest(_body, ctx) {
        return {
          url: joinUrl(geminiApiBase(ctx), "models?pageSize=1000"),
          method: "GET",
          headers: headers(ctx, false),
        };
      },
      transformResponse(upstream) {
        const models: any[] = Array.isArray(upstream?.models) ? upstream.models : [];
        return {
          object: "list",
          data: models
            .filter((model) => typeof model?.name === "string")
            .map((model) => ({
              id: String(model.name).replace(/^models\//, ""),
              object: "model",
              created: 0,
              owned_by: "google",
            })),
        };
      },
    },
  },
  passthrough: googlePassthrough,
};
