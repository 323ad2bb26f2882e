import type { RouteFamily } from "../../http/route-types.ts";

/**
 * OpenAI's Responses API on every provider (core/inference/formats/responses, core/features/responses): native on OpenAI and
 * Azure OpenAI, translated to chat for the rest; stored responses belong to the workspace that made them.
 */
export const family: RouteFamily = {
  name: "responses",
  dataPlane: true,
  timeoutSeconds: 900,
  routes: [
    { method: "POST", path: "/v1/responses", handler: "createResponse", auth: "api_key", body: "json" },
    { method: "GET", path: "/v1/responses/:id", handler: "getResponse", auth: "api_key" },
    { method: "DELETE", path: "/v1/responses/:id", handler: "deleteResponse", auth: "api_key" },
    { method: "GET", path: "/v1/responses/:id/input_items", handler: "listInputItems", auth: "api_key" },
    { method: "POST", path: "/v1/responses/:id/cancel", handler: "cancelResponse", auth: "api_key" },
  ],
};
