import type { RouteFamily } from "../../http/route-types.ts";

/**
 * The `models` route family: the model list and one model of it (OpenAI's retrieve), and Gemini's model calls under `/v1` (the @google/genai SDK's default
 * API version: `POST /v1/models/{model}:generateContent`...), served by the Gemini family's handler
 * (core/routes/table/gemini.ts). They share `/v1/models`, the prefix the AWS Router gives one function, so they
 * live in one family; streamed answers need the longer timeout.
 */
export const family: RouteFamily = {
  name: "models",
  dataPlane: true,
  timeoutSeconds: 900,
  routes: [
    { method: "GET", path: "/v1/models", handler: "listModels", auth: "api_key" },
    { method: "GET", path: "/v1/models/*", handler: "retrieveModel", auth: "api_key" },
    {
      method: "POST",
      path: "/v1/models/*",
      handler: "geminiModelCall",
      auth: "api_key",
      body: "json",
      errors: "gemini",
    },
  ],
};
