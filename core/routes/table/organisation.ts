import type { RouteFamily, RouteSpec } from "../../http/route-types.ts";

/**
 * Organisation settings and default guardrails, workspace exclusions, audit log (admin only).
 */
export const family: RouteFamily = {
  name: "organisation",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "GET",
      path: "/v1/admin/organisation/settings",
      handler: "getOrganisationSettings",
      auth: "api_key",
      scope: "organisation_settings.read",
    },
    {
      method: "PUT",
      path: "/v1/admin/organisation/settings",
      handler: "updateOrganisationSettings",
      auth: "api_key",
      body: "json",
      scope: "organisation_settings.update",
    },
    {
      method: "GET",
      path: "/v1/admin/organisation/defaults",
      handler: "getOrganisationDefaults",
      auth: "api_key",
      scope: "organisation_settings.read",
    },
    {
      method: "PUT",
      path: "/v1/admin/organisation/defaults",
      handler: "updateOrganisationDefaults",
      auth: "api_key",
      body: "json",
      scope: "organisation_settings.update",
    },
    ...["input-guardrails", "output-guardrails"].flatMap((list): RouteSpec[] => [
      {
        method: "GET",
        path: `/v1/workspace-exclusions/${list}`,
        handler: "listWorkspaceExclusions",
        auth: "api_key",
        scope: "organisation_exclusions.list",
      },
      {
        method: "PUT",
        path: `/v1/workspace-exclusions/${list}`,
        handler: "updateWorkspaceExclusions",
        auth: "api_key",
        body: "json",
        scope: "organisation_exclusions.update",
      },
    ]),
    { method: "GET", path: "/v1/audit-logs", handler: "listAuditLogs", auth: "api_key", scope: "audit_logs.list" },
  ],
};
