import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Prometheus text, only when ENABLE_PROMETHEUS is set (404 otherwise).
 */
export const family: RouteFamily = {
  name: "metrics",
  dataPlane: false,
  timeoutSeconds: 10,
  routes: [
    { method: "GET", path: "/metrics", handler: "metrics", auth: "none" },
    { method: "GET", path: "/dataservice/metrics", handler: "metrics", auth: "none" },
  ],
};
