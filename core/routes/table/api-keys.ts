import type { RouteFamily } from "../../http/route-types.ts";

/**
 * API keys (spec 4.8, 5.5). `:id/rotate` precedes the generic `:type/:subType` create (first match wins).
 */
export const family: RouteFamily = {
  name: "api-keys",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "POST",
      path: "/v1/api-keys/:id/rotate",
      handler: "rotateKey",
      auth: "api_key",
      scope: "api_keys.update",
    },
    {
      method: "POST",
      path: "/v1/api-keys/organisation/service",
      handler: "createOrganisationServiceKey",
      auth: "api_key",
      body: "json",
      scope: "api_keys.create",
    },
    {
      method: "POST",
      path: "/v1/api-keys/workspace/user",
      handler: "createWorkspaceUserKey",
      auth: "api_key",
      body: "json",
      scope: "api_keys.create",
    },
    {
      method: "POST",
      path: "/v1/api-keys/workspace/service",
      handler: "createWorkspaceServiceKey",
      auth: "api_key",
      body: "json",
      scope: "api_keys.create",
    },
    {
      method: "POST",
      path: "/v1/api-keys/:type/:subType",
      handler: "createKeyByType",
      auth: "api_key",
      body: "json",
      scope: "api_keys.create",
    },
    {
      method: "POST",
      path: "/v1/api-keys",
      handler: "createKeyFromBody",
      auth: "api_key",
      body: "json",
      scope: "api_keys.create",
    },
    { method: "GET", path: "/v1/api-keys", handler: "listKeys", auth: "api_key", scope: "api_keys.list" },
    { method: "GET", path: "/v2/api-keys", handler: "batchLookupKeys", auth: "api_key", scope: "api_keys.list" },
    { method: "GET", path: "/v1/api-keys/:id", handler: "getKey", auth: "api_key", scope: "api_keys.read" },
    {
      method: "PUT",
      path: "/v1/api-keys/:id",
      handler: "updateKey",
      auth: "api_key",
      body: "json",
      scope: "api_keys.update",
    },
    { method: "DELETE", path: "/v1/api-keys/:id", handler: "deleteKey", auth: "api_key", scope: "api_keys.delete" },
  ],
};
