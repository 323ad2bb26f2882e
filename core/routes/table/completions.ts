import type { RouteFamily } from "../../http/route-types.ts";

/** The `completions` route family. */
export const family: RouteFamily = {
  name: "completions",
  dataPlane: true,
  timeoutSeconds: 900,
  routes: [{ method: "POST", path: "/v1/completions", handler: "completions", auth: "api_key", body: "json" }],
};
