import type { Method, RouteFamily, RouteSpec } from "../../http/route-types.ts";

/**
 * SCIM 2.0 provisioning (core/identity/scim): /scim/v2 authenticates with a SCIM token (checked by the handlers, not
 * API keys); the admin side (tokens, group mappings, spec 4.8's views) is for organisation admins.
 */
export const family: RouteFamily = {
  name: "scim",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "POST",
      path: "/v1/admin/scim/tokens",
      handler: "createScimToken",
      auth: "api_key",
      body: "json",
      scope: "scim_tokens.create",
    },
    {
      method: "GET",
      path: "/v1/admin/scim/tokens",
      handler: "listScimTokens",
      auth: "api_key",
      scope: "scim_tokens.list",
    },
    {
      method: "DELETE",
      path: "/v1/admin/scim/tokens/:id",
      handler: "revokeScimToken",
      auth: "api_key",
      scope: "scim_tokens.delete",
    },
    {
      method: "POST",
      path: "/v1/admin/scim/group-mappings",
      handler: "createScimGroupMapping",
      auth: "api_key",
      body: "json",
      scope: "scim_group_mappings.create",
    },
    {
      method: "GET",
      path: "/v1/admin/scim/group-mappings",
      handler: "listScimGroupMappings",
      auth: "api_key",
      scope: "scim_group_mappings.list",
    },
    {
      method: "GET",
      path: "/v1/admin/scim/group-mappings/:id",
      handler: "getScimGroupMapping",
      auth: "api_key",
      scope: "scim_group_mappings.read",
    },
    {
      method: "DELETE",
      path: "/v1/admin/scim/group-mappings/:id",
      handler: "deleteScimGroupMapping",
      auth: "api_key",
      scope: "scim_group_mappings.delete",
    },
    // Spec 4.8.
    {
      method: "GET",
      path: "/v1/scim/workspaces",
      handler: "scimWorkspaces",
      auth: "api_key",
      scope: "scim_group_mappings.list",
    },
    {
      method: "GET",
      path: "/v1/scim/groups",
      handler: "scimGroupsSearch",
      auth: "api_key",
      scope: "scim_groups.list",
    },
    {
      method: "DELETE",
      path: "/v1/scim/workspaces/:id/groups/:groupId",
      handler: "scimUnmapWorkspaceGroup",
      auth: "api_key",
      scope: "scim_group_mappings.delete",
    },
    // The SCIM protocol routes (RFC 7644): a SCIM token authenticates them (core/routes/handlers/scim.ts).
    ...(
      [
        ["GET", "/scim/v2/Users", "scimListUsers"],
        ["POST", "/scim/v2/Users", "scimCreateUser"],
        ["GET", "/scim/v2/Users/:id", "scimGetUser"],
        ["PUT", "/scim/v2/Users/:id", "scimReplaceUser"],
        ["PATCH", "/scim/v2/Users/:id", "scimPatchUser"],
        ["DELETE", "/scim/v2/Users/:id", "scimDeleteUser"],
        ["GET", "/scim/v2/Groups", "scimListGroups"],
        ["POST", "/scim/v2/Groups", "scimCreateGroup"],
        ["GET", "/scim/v2/Groups/:id", "scimGetGroup"],
        ["PUT", "/scim/v2/Groups/:id", "scimReplaceGroup"],
        ["PATCH", "/scim/v2/Groups/:id", "scimPatchGroup"],
        ["DELETE", "/scim/v2/Groups/:id", "scimDeleteGroup"],
      ] as Array<[Method, string, string]>
    ).map(
      ([method, path, handler]): RouteSpec => ({
        method,
        path,
        handler,
        auth: "none",
        ...(method === "POST" || method === "PUT" || method === "PATCH" ? { body: "json" as const } : {}),
      }),
    ),
  ],
};
