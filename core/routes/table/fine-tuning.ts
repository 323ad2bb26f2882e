import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Fine-tuning (spec 2.9, 4.5; core/features/fine-tuning): jobs forwarded to the provider, recorded in the workspace,
 * their status refreshed by a scheduled task.
 */
export const family: RouteFamily = {
  name: "fine-tuning",
  dataPlane: true,
  timeoutSeconds: 120,
  routes: [
    { method: "POST", path: "/v1/fine_tuning/jobs", handler: "createFineTuningJob", auth: "api_key", body: "json" },
    { method: "GET", path: "/v1/fine_tuning/jobs", handler: "listFineTuningJobs", auth: "api_key" },
    { method: "GET", path: "/v1/fine_tuning/jobs/:id", handler: "getFineTuningJob", auth: "api_key" },
    { method: "POST", path: "/v1/fine_tuning/jobs/:id/cancel", handler: "cancelFineTuningJob", auth: "api_key" },
    { method: "GET", path: "/v1/fine_tuning/jobs/:id/events", handler: "listFineTuningEvents", auth: "api_key" },
    {
      method: "GET",
      path: "/v1/fine_tuning/jobs/:id/checkpoints",
      handler: "listFineTuningCheckpoints",
      auth: "api_key",
    },
  ],
};
