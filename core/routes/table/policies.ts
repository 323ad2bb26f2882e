import type { RouteFamily, RouteSpec } from "../../http/route-types.ts";

/** The six routes of one policy kind at `path`; handler names spelled out so they can be grepped. */
function policyRoutes(
  path: string,
  handler: Record<"create" | "list" | "get" | "update" | "remove" | "usage", string>,
): RouteSpec[] {
  return [
    { method: "POST", path, handler: handler.create, auth: "api_key", body: "json", scope: "policies.create" },
    { method: "GET", path, handler: handler.list, auth: "api_key", scope: "policies.list" },
    { method: "GET", path: `${path}/:id`, handler: handler.get, auth: "api_key", scope: "policies.read" },
    {
      method: "PUT",
      path: `${path}/:id`,
      handler: handler.update,
      auth: "api_key",
      body: "json",
      scope: "policies.update",
    },
    { method: "DELETE", path: `${path}/:id`, handler: handler.remove, auth: "api_key", scope: "policies.delete" },
    { method: "GET", path: `${path}/:id/usage`, handler: handler.usage, auth: "api_key", scope: "policies.read" },
  ];
}

/**
 * Usage-limit and rate-limit policies (core/inference/policies), under /v2 (Portkey's paths) and /v1.
 */
export const family: RouteFamily = {
  name: "policies",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: ["/v2/policies", "/v1/policies"].flatMap((base) => [
    ...policyRoutes(`${base}/usage-limits`, {
      create: "createUsageLimitPolicy",
      list: "listUsageLimitPolicies",
      get: "getUsageLimitPolicy",
      update: "updateUsageLimitPolicy",
      remove: "deleteUsageLimitPolicy",
      usage: "getUsageLimitPolicyUsage",
    }),
    ...policyRoutes(`${base}/rate-limits`, {
      create: "createRateLimitPolicy",
      list: "listRateLimitPolicies",
      get: "getRateLimitPolicy",
      update: "updateRateLimitPolicy",
      remove: "deleteRateLimitPolicy",
      usage: "getRateLimitPolicyUsage",
    }),
  ]),
};
