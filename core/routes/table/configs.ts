import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Saved routing configs with versions (x-gateway-config: <id or slug>).
 */
export const family: RouteFamily = {
  name: "configs",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "POST",
      path: "/v1/configs",
      handler: "createConfig",
      auth: "api_key",
      body: "json",
      scope: "configs.create",
    },
    { method: "GET", path: "/v1/configs", handler: "listConfigs", auth: "api_key", scope: "configs.list" },
    {
      method: "GET",
      path: "/v1/configs/:id/versions",
      handler: "listConfigVersions",
      auth: "api_key",
      scope: "configs.read",
    },
    { method: "GET", path: "/v1/configs/:id", handler: "getConfig", auth: "api_key", scope: "configs.read" },
    {
      method: "PUT",
      path: "/v1/configs/:id",
      handler: "updateConfig",
      auth: "api_key",
      body: "json",
      scope: "configs.update",
    },
    { method: "DELETE", path: "/v1/configs/:id", handler: "deleteConfig", auth: "api_key", scope: "configs.delete" },
  ],
};
