import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Model price overrides and custom models, per organisation, workspace or integration (cost tracking).
 */
export const family: RouteFamily = {
  name: "model-pricing",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "POST",
      path: "/v1/model-pricing",
      handler: "createModelPricing",
      auth: "api_key",
      body: "json",
      scope: "model_pricing.create",
    },
    {
      method: "GET",
      path: "/v1/model-pricing",
      handler: "listModelPricing",
      auth: "api_key",
      scope: "model_pricing.list",
    },
    {
      method: "GET",
      path: "/v1/model-pricing/:id",
      handler: "getModelPricing",
      auth: "api_key",
      scope: "model_pricing.read",
    },
    {
      method: "PUT",
      path: "/v1/model-pricing/:id",
      handler: "updateModelPricing",
      auth: "api_key",
      body: "json",
      scope: "model_pricing.update",
    },
    {
      method: "DELETE",
      path: "/v1/model-pricing/:id",
      handler: "deleteModelPricing",
      auth: "api_key",
      scope: "model_pricing.delete",
    },
  ],
};
