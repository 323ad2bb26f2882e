import type { RouteFamily, RouteSpec } from "../../http/route-types.ts";

const PASSTHROUGH_METHODS = ["POST", "GET", "PUT", "DELETE"] as const;

/**
 * Generic pass-through (spec 4.7): /v1/proxy/* always forwards raw; /v1/* forwards whatever no dedicated
 * route handles. Configs, retries, custom-host checks and auth apply as on every other route.
 */
export const family: RouteFamily = {
  name: "passthrough",
  dataPlane: true,
  timeoutSeconds: 900,
  routes: [
    ...PASSTHROUGH_METHODS.map(
      (method): RouteSpec => ({ method, path: "/v1/proxy/*", handler: "proxy", auth: "api_key", body: "upload" }),
    ),
    ...PASSTHROUGH_METHODS.map(
      (method): RouteSpec => ({
        method,
        path: "/v1/*",
        handler: "passthrough",
        auth: "api_key",
        body: "upload",
        catchAll: true,
      }),
    ),
  ],
};
