import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Spec 4.1: the provider's rerank answer as received, its usage logged and priced.
 */
export const family: RouteFamily = {
  name: "rerank",
  dataPlane: true,
  timeoutSeconds: 60,
  routes: [{ method: "POST", path: "/v1/rerank", handler: "rerank", auth: "api_key", body: "json" }],
};
