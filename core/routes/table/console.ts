import type { RouteFamily } from "../../http/route-types.ts";

/**
 * The web console (console/, issue 29): its built static files, public like any web page (it signs in
 * through the API). Served by the local gateway; on AWS the Router serves them from a bucket.
 */
export const family: RouteFamily = {
  name: "console",
  dataPlane: false,
  timeoutSeconds: 10,
  platform: "static",
  routes: [
    { method: "GET", path: "/", handler: "consoleFile", auth: "none" },
    { method: "GET", path: "/assets/*", handler: "consoleFile", auth: "none" },
  ],
};
