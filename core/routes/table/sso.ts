import type { RouteFamily } from "../../http/route-types.ts";

/**
 * OIDC single sign-on (issue 28, spec 5.5): organisation SSO settings (admins), browser login and logout.
 */
export const family: RouteFamily = {
  name: "sso",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "GET",
      path: "/v1/admin/organisation/sso",
      handler: "getSsoSettings",
      auth: "api_key",
      scope: "sso_settings.read",
    },
    {
      method: "PUT",
      path: "/v1/admin/organisation/sso",
      handler: "updateSsoSettings",
      auth: "api_key",
      body: "json",
      scope: "sso_settings.update",
    },
    { method: "GET", path: "/v1/auth/sso/login", handler: "ssoLogin", auth: "none" },
    { method: "GET", path: "/v1/auth/sso/callback", handler: "ssoCallback", auth: "none" },
    { method: "POST", path: "/v1/auth/logout", handler: "logout", auth: "none" },
  ],
};
