import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Anthropic's Messages API on every provider (core/inference/formats/messages): native on Anthropic and on Bedrock and
 * Vertex AI Claude models, translated to chat for the rest.
 */
export const family: RouteFamily = {
  name: "messages",
  dataPlane: true,
  timeoutSeconds: 900,
  routes: [
    { method: "POST", path: "/v1/messages", handler: "createMessage", auth: "api_key", body: "json" },
    {
      method: "POST",
      path: "/v1/messages/count_tokens",
      handler: "countMessageTokens",
      auth: "api_key",
      body: "json",
    },
  ],
};
