import type { RouteFamily } from "../../http/route-types.ts";

/**
 * A workspace's providers (the portkey-ai SDK's providers.*): named handles on integrations, used as `@slug`.
 */
export const family: RouteFamily = {
  name: "providers",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "POST",
      path: "/v1/providers",
      handler: "createProvider",
      auth: "api_key",
      body: "json",
      scope: "providers.create",
    },
    { method: "GET", path: "/v1/providers", handler: "listProviders", auth: "api_key", scope: "providers.list" },
    { method: "GET", path: "/v1/providers/:id", handler: "getProvider", auth: "api_key", scope: "providers.read" },
    {
      method: "PUT",
      path: "/v1/providers/:id",
      handler: "updateProvider",
      auth: "api_key",
      body: "json",
      scope: "providers.update",
    },
    {
      method: "DELETE",
      path: "/v1/providers/:id",
      handler: "deleteProvider",
      auth: "api_key",
      scope: "providers.delete",
    },
  ],
};
