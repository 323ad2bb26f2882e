import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Spec 4.1: OCR through retries, fallbacks, load balancing, caching, logging and per-page pricing.
 */
export const family: RouteFamily = {
  name: "ocr",
  dataPlane: true,
  timeoutSeconds: 300,
  routes: [{ method: "POST", path: "/v1/ocr", handler: "ocr", auth: "api_key", body: "json" }],
};
