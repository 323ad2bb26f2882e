import type { RouteFamily } from "../../http/route-types.ts";

/**
 * The caller's own identity: JWT (or session) only (spec 4.8).
 */
export const family: RouteFamily = {
  name: "auth",
  dataPlane: false,
  timeoutSeconds: 10,
  routes: [{ method: "GET", path: "/v1/auth/self", handler: "self", auth: "api_key" }],
};
