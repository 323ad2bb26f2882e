import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Feedback on traced requests (workspace keys only), counted into analytics.
 */
export const family: RouteFamily = {
  name: "feedback",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "POST",
      path: "/v1/feedback",
      handler: "createFeedback",
      auth: "api_key",
      body: "json",
      scope: "feedback.create",
    },
    {
      method: "PUT",
      path: "/v1/feedback/:id",
      handler: "updateFeedback",
      auth: "api_key",
      body: "json",
      scope: "feedback.update",
    },
  ],
};
