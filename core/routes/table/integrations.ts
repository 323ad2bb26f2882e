import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Integrations: saved AI providers (x-gateway-provider: @slug), workspace access, models.
 */
export const family: RouteFamily = {
  name: "integrations",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "POST",
      path: "/v1/integrations",
      handler: "createIntegration",
      auth: "api_key",
      body: "json",
      scope: "integrations.create",
    },
    {
      method: "GET",
      path: "/v1/integrations",
      handler: "listIntegrations",
      auth: "api_key",
      scope: "integrations.list",
    },
    {
      method: "GET",
      path: "/v1/integrations/:id/workspaces",
      handler: "listIntegrationWorkspaces",
      auth: "api_key",
      scope: "integrations.read",
    },
    {
      method: "PUT",
      path: "/v1/integrations/:id/workspaces",
      handler: "updateIntegrationWorkspaces",
      auth: "api_key",
      body: "json",
      scope: "integrations.update",
    },
    {
      method: "GET",
      path: "/v1/integrations/:id/models",
      handler: "listIntegrationModels",
      auth: "api_key",
      scope: "integrations.read",
    },
    {
      method: "PUT",
      path: "/v1/integrations/:id/models",
      handler: "updateIntegrationModels",
      auth: "api_key",
      body: "json",
      scope: "integrations.update",
    },
    {
      method: "DELETE",
      path: "/v1/integrations/:id/models",
      handler: "deleteIntegrationModels",
      auth: "api_key",
      scope: "integrations.update",
    },
    {
      method: "PUT",
      path: "/v1/integrations/:id/integration-models",
      handler: "updateIntegrationModels",
      auth: "api_key",
      body: "json",
      scope: "integrations.update",
    },
    {
      method: "GET",
      path: "/v1/integrations/:id",
      handler: "getIntegration",
      auth: "api_key",
      scope: "integrations.read",
    },
    {
      method: "PUT",
      path: "/v1/integrations/:id",
      handler: "updateIntegration",
      auth: "api_key",
      body: "json",
      scope: "integrations.update",
    },
    {
      method: "DELETE",
      path: "/v1/integrations/:id",
      handler: "deleteIntegration",
      auth: "api_key",
      scope: "integrations.delete",
    },
  ],
};
