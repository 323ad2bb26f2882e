import type { RouteFamily } from "../../http/route-types.ts";

/**
 * OpenAI's Images API on every provider that makes images (core/inference/gateway/schemas/images.ts): per-image pricing.
 */
export const family: RouteFamily = {
  name: "images",
  dataPlane: true,
  timeoutSeconds: 300,
  routes: [
    { method: "POST", path: "/v1/images/generations", handler: "generateImages", auth: "api_key", body: "json" },
    { method: "POST", path: "/v1/images/edits", handler: "editImages", auth: "api_key", body: "upload" },
    { method: "POST", path: "/v1/images/variations", handler: "imageVariations", auth: "api_key", body: "upload" },
  ],
};
