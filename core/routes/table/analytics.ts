import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Analytics from the per-hour / per-day aggregates (core/observe/analytics).
 */
export const family: RouteFamily = {
  name: "analytics",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "GET",
      path: "/v1/analytics/graphs/:metric",
      handler: "graph",
      auth: "api_key",
      scope: "analytics.view",
    },
    {
      // The portkey-ai SDK's feedbacks/score, feedbacks/weighted and feedbacks/ai-models.
      method: "GET",
      path: "/v1/analytics/graphs/feedbacks/:view",
      handler: "feedbackGraph",
      auth: "api_key",
      scope: "analytics.view",
    },
    { method: "GET", path: "/v1/analytics/summary", handler: "summary", auth: "api_key", scope: "analytics.view" },
    {
      method: "GET",
      path: "/v1/analytics/summary/cache",
      handler: "cacheSummary",
      auth: "api_key",
      scope: "analytics.view",
    },
    {
      method: "GET",
      path: "/v1/analytics/groups/metadata/:key",
      handler: "groups",
      auth: "api_key",
      scope: "analytics.view",
    },
    {
      method: "GET",
      path: "/v1/analytics/groups/:group",
      handler: "groups",
      auth: "api_key",
      scope: "analytics.view",
    },
  ],
};
