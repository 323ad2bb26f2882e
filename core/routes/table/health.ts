import type { RouteFamily } from "../../http/route-types.ts";

/** The `health` route family. */
export const family: RouteFamily = {
  name: "health",
  dataPlane: false,
  timeoutSeconds: 10,
  routes: [
    { method: "GET", path: "/health", handler: "health", auth: "none" },
    { method: "GET", path: "/v1/health", handler: "health", auth: "none" },
    // The API's description (core/routes/openapi), public like the health check; generated from this table.
    { method: "GET", path: "/v1/openapi.json", handler: "openApi", auth: "none" },
  ],
};
