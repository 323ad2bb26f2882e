import type { RouteFamily } from "../../http/route-types.ts";

/** The `logs` route family. */
export const family: RouteFamily = {
  name: "logs",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    { method: "GET", path: "/v1/logs", handler: "listLogs", auth: "api_key", scope: "logs.list" },
    { method: "POST", path: "/v1/logs", handler: "createLog", auth: "api_key", body: "json", scope: "logs.write" },
    // Log exports (core/observe/exports) share the /v1/logs prefix, so they live in this family; before /v1/logs/:id.
    {
      method: "GET",
      path: "/v1/logs/exports/field-restrictions",
      handler: "exportFieldRestrictions",
      auth: "api_key",
      scope: "logs.export",
    },
    {
      method: "POST",
      path: "/v1/logs/exports",
      handler: "createExport",
      auth: "api_key",
      body: "json",
      scope: "logs.export",
    },
    { method: "GET", path: "/v1/logs/exports", handler: "listExports", auth: "api_key", scope: "logs.list" },
    { method: "GET", path: "/v1/logs/exports/:id", handler: "getExport", auth: "api_key", scope: "logs.view" },
    {
      method: "PUT",
      path: "/v1/logs/exports/:id",
      handler: "updateExport",
      auth: "api_key",
      body: "json",
      scope: "logs.export",
    },
    {
      method: "POST",
      path: "/v1/logs/exports/:id/start",
      handler: "startExport",
      auth: "api_key",
      scope: "logs.export",
    },
    {
      method: "POST",
      path: "/v1/logs/exports/:id/cancel",
      handler: "cancelExport",
      auth: "api_key",
      scope: "logs.export",
    },
    {
      method: "GET",
      path: "/v1/logs/exports/:id/download",
      handler: "downloadExport",
      auth: "api_key",
      scope: "logs.view",
    },
    { method: "GET", path: "/v1/logs/traces/:traceId", handler: "getTrace", auth: "api_key", scope: "logs.view" },
    { method: "GET", path: "/v1/logs/:id", handler: "getLog", auth: "api_key", scope: "logs.view" },
  ],
};
