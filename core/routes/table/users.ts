import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Users and invites (admin only); accepting an invite is public and proven by the invite token.
 */
export const family: RouteFamily = {
  name: "users",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    // Fixed `invites` paths before `/:id`, so they win.
    {
      method: "GET",
      path: "/v1/admin/users/invites",
      handler: "listInvites",
      auth: "api_key",
      scope: "invites.list",
    },
    {
      method: "POST",
      path: "/v1/admin/users/invites",
      handler: "createInvite",
      auth: "api_key",
      body: "json",
      scope: "invites.create",
    },
    { method: "POST", path: "/v1/admin/users/invites/accept", handler: "acceptInvite", auth: "none", body: "json" },
    {
      method: "GET",
      path: "/v1/admin/users/invites/:id",
      handler: "getInvite",
      auth: "api_key",
      scope: "invites.read",
    },
    {
      method: "POST",
      path: "/v1/admin/users/invites/:id/resend",
      handler: "resendInvite",
      auth: "api_key",
      scope: "invites.update",
    },
    {
      method: "DELETE",
      path: "/v1/admin/users/invites/:id",
      handler: "deleteInvite",
      auth: "api_key",
      scope: "invites.delete",
    },
    { method: "GET", path: "/v1/admin/users", handler: "listUsers", auth: "api_key", scope: "users.list" },
    { method: "GET", path: "/v1/admin/users/:id", handler: "getUser", auth: "api_key", scope: "users.read" },
    {
      method: "PUT",
      path: "/v1/admin/users/:id",
      handler: "updateUser",
      auth: "api_key",
      body: "json",
      scope: "users.update",
    },
    { method: "DELETE", path: "/v1/admin/users/:id", handler: "deleteUser", auth: "api_key", scope: "users.delete" },
  ],
};
