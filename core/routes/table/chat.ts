import type { RouteFamily } from "../../http/route-types.ts";

/** The `chat` route family. */
export const family: RouteFamily = {
  name: "chat",
  dataPlane: true,
  timeoutSeconds: 900,
  routes: [{ method: "POST", path: "/v1/chat/completions", handler: "chatCompletions", auth: "api_key", body: "json" }],
};
