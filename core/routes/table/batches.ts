import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Batches (spec 2.6; core/features/batches) on any provider: native where the provider has a batch API, else run by
 * the gateway's queue workers through the normal pipeline.
 */
export const family: RouteFamily = {
  name: "batches",
  dataPlane: true,
  timeoutSeconds: 300,
  routes: [
    { method: "POST", path: "/v1/batches", handler: "createBatch", auth: "api_key", body: "json" },
    { method: "GET", path: "/v1/batches", handler: "listBatches", auth: "api_key" },
    { method: "GET", path: "/v1/batches/:id", handler: "getBatch", auth: "api_key" },
    { method: "POST", path: "/v1/batches/:id/cancel", handler: "cancelBatch", auth: "api_key" },
    // Spec 4.8: an administrator points a batch at another output file of its workspace.
    {
      method: "PUT",
      path: "/v2/batches/:id",
      handler: "updateBatch",
      auth: "api_key",
      body: "json",
      scope: "batches.update",
    },
  ],
};
