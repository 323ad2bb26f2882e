import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Spec 4.1, 2.10: the 11 categories of OpenAI's moderation result, whichever provider answers.
 */
export const family: RouteFamily = {
  name: "moderations",
  dataPlane: true,
  timeoutSeconds: 60,
  routes: [{ method: "POST", path: "/v1/moderations", handler: "createModeration", auth: "api_key", body: "json" }],
};
