import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Workspaces and their members (spec 2.11, 4.8, 5.5): admin keys manage; a workspace key reads its own.
 */
export const family: RouteFamily = {
  name: "workspaces",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "GET",
      path: "/v1/admin/workspaces",
      handler: "listWorkspaces",
      auth: "api_key",
      scope: "workspaces.list",
    },
    {
      method: "POST",
      path: "/v1/admin/workspaces",
      handler: "createWorkspace",
      auth: "api_key",
      body: "json",
      scope: "workspaces.create",
    },
    {
      method: "GET",
      path: "/v1/admin/workspaces/:id",
      handler: "getWorkspace",
      auth: "api_key",
      scope: "workspaces.read",
    },
    {
      method: "PUT",
      path: "/v1/admin/workspaces/:id",
      handler: "updateWorkspace",
      auth: "api_key",
      body: "json",
      scope: "workspaces.update",
    },
    {
      method: "DELETE",
      path: "/v1/admin/workspaces/:id",
      handler: "deleteWorkspace",
      auth: "api_key",
      scope: "workspaces.delete",
    },
    { method: "GET", path: "/v2/workspaces/:id", handler: "getWorkspace", auth: "api_key", scope: "workspaces.read" },
    {
      method: "PUT",
      path: "/v2/workspaces/:id",
      handler: "updateWorkspace",
      auth: "api_key",
      body: "json",
      scope: "workspaces.update",
    },
    {
      method: "GET",
      path: "/v1/admin/workspaces/:id/users",
      handler: "listWorkspaceMembers",
      auth: "api_key",
      scope: "workspace_users.list",
    },
    {
      method: "POST",
      path: "/v1/admin/workspaces/:id/users",
      handler: "addWorkspaceMembers",
      auth: "api_key",
      body: "json",
      scope: "workspace_users.create",
    },
    {
      method: "GET",
      path: "/v1/admin/workspaces/:id/users/:userId",
      handler: "getWorkspaceMember",
      auth: "api_key",
      scope: "workspace_users.read",
    },
    {
      method: "PUT",
      path: "/v1/admin/workspaces/:id/users/:userId",
      handler: "updateWorkspaceMember",
      auth: "api_key",
      body: "json",
      scope: "workspace_users.update",
    },
    {
      method: "DELETE",
      path: "/v1/admin/workspaces/:id/users/:userId",
      handler: "removeWorkspaceMember",
      auth: "api_key",
      scope: "workspace_users.delete",
    },
  ],
};
