import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Google's Gemini API on every provider (core/inference/formats/gemini), what Gemini's SDKs call with their base
 * URL at the gateway: `POST /{version}/models/{model}:generateContent`, `:streamGenerateContent` (`?alt=sse` for
 * server-sent events, else a streamed JSON array) and `:countTokens`, for the API versions `v1beta` and `v1alpha`
 * here and `v1` (the @google/genai SDK's default) in the models family, which owns the `/v1/models` prefix.
 * Native on Google and Vertex AI's Gemini models, translated to chat for the rest. One route a version takes
 * every `models/...` call because model names may hold slashes (`openai/gpt-4o` on a router); the handler reads
 * the method after the last `:`. Its errors are Google's (`{"error": {"code", "message", "status"}}`).
 */
export const family: RouteFamily = {
  name: "gemini",
  dataPlane: true,
  timeoutSeconds: 900,
  routes: ["v1beta", "v1alpha"].map((version) => ({
    method: "POST" as const,
    path: `/${version}/models/*`,
    handler: "geminiModelCall",
    auth: "api_key" as const,
    body: "json" as const,
    errors: "gemini" as const,
  })),
};
