import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Legacy virtual keys (x-gateway-virtual-key: <slug>).
 */
export const family: RouteFamily = {
  name: "virtual-keys",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "POST",
      path: "/v1/virtual-keys",
      handler: "createVirtualKey",
      auth: "api_key",
      body: "json",
      scope: "virtual_keys.create",
    },
    {
      method: "GET",
      path: "/v1/virtual-keys",
      handler: "listVirtualKeys",
      auth: "api_key",
      scope: "virtual_keys.list",
    },
    {
      method: "GET",
      path: "/v1/virtual-keys/:slug/workspaces",
      handler: "listVirtualKeyWorkspaces",
      auth: "api_key",
      scope: "virtual_keys.read",
    },
    {
      method: "PUT",
      path: "/v1/virtual-keys/:slug/workspaces",
      handler: "updateVirtualKeyWorkspaces",
      auth: "api_key",
      body: "json",
      scope: "virtual_keys.update",
    },
    {
      method: "GET",
      path: "/v1/virtual-keys/:slug",
      handler: "getVirtualKey",
      auth: "api_key",
      scope: "virtual_keys.read",
    },
    {
      method: "PUT",
      path: "/v1/virtual-keys/:slug",
      handler: "updateVirtualKey",
      auth: "api_key",
      body: "json",
      scope: "virtual_keys.update",
    },
    {
      method: "DELETE",
      path: "/v1/virtual-keys/:slug",
      handler: "deleteVirtualKey",
      auth: "api_key",
      scope: "virtual_keys.delete",
    },
  ],
};
