import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Self-hosted gateway deployments (issue 28): organisation admins register and delete them; a deployment
 * posts heartbeats with its own key (scope deployments.heartbeat), `self` naming its own deployment.
 */
export const family: RouteFamily = {
  name: "deployments",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "POST",
      path: "/v1/deployments",
      handler: "registerDeployment",
      auth: "api_key",
      body: "json",
      scope: "deployments.create",
    },
    {
      method: "GET",
      path: "/v1/deployments",
      handler: "listDeployments",
      auth: "api_key",
      scope: "deployments.list",
    },
    {
      method: "GET",
      path: "/v1/deployments/:id",
      handler: "getDeployment",
      auth: "api_key",
      scope: "deployments.read",
    },
    {
      method: "POST",
      path: "/v1/deployments/:id/heartbeat",
      handler: "deploymentHeartbeat",
      auth: "api_key",
      body: "json",
      scope: "deployments.heartbeat",
    },
    {
      method: "DELETE",
      path: "/v1/deployments/:id",
      handler: "deleteDeployment",
      auth: "api_key",
      scope: "deployments.delete",
    },
  ],
};
