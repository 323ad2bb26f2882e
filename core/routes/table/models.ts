import type { RouteFamily } from "../../http/route-types.ts";

/** The `models` route family. */
export const family: RouteFamily = {
  name: "models",
  dataPlane: true,
  timeoutSeconds: 30,
  routes: [{ method: "GET", path: "/v1/models", handler: "listModels", auth: "api_key" }],
};
