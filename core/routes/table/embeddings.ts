import type { RouteFamily } from "../../http/route-types.ts";

/** The `embeddings` route family. */
export const family: RouteFamily = {
  name: "embeddings",
  dataPlane: true,
  timeoutSeconds: 300,
  routes: [{ method: "POST", path: "/v1/embeddings", handler: "embeddings", auth: "api_key", body: "json" }],
};
