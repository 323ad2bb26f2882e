import type { RouteFamily } from "../../http/route-types.ts";

/**
 * OpenAI's Realtime API over a WebSocket (core/inference/realtime): the upgrade is served by the platform's upgrade
 * handler (core/platform/node/realtime-upgrade.ts); this route answers a plain GET. On AWS a container service.
 */
export const family: RouteFamily = {
  name: "realtime",
  dataPlane: true,
  timeoutSeconds: 900,
  platform: "container",
  routes: [{ method: "GET", path: "/v1/realtime", handler: "realtime", auth: "api_key" }],
};
