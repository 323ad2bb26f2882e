import type { RouteFamily } from "../../http/route-types.ts";

/**
 * The agents gateway (core/features/agents): A2A agent integrations, and each one served as the gateway's own A2A agent
 * at /v1/agents/:agent (id or slug), forwarded upstream with the integration's stored credentials.
 */
export const family: RouteFamily = {
  name: "agents",
  dataPlane: false,
  timeoutSeconds: 900,
  routes: [
    {
      method: "POST",
      path: "/v2/agent-integrations/fetch-agent-card",
      handler: "fetchAgentCard",
      auth: "api_key",
      body: "json",
      scope: "agent_integrations.create",
    },
    {
      method: "POST",
      path: "/v2/agent-integrations",
      handler: "createAgentIntegration",
      auth: "api_key",
      body: "json",
      scope: "agent_integrations.create",
    },
    {
      method: "GET",
      path: "/v2/agent-integrations",
      handler: "listAgentIntegrations",
      auth: "api_key",
      scope: "agent_integrations.list",
    },
    {
      method: "GET",
      path: "/v2/agent-integrations/:id",
      handler: "getAgentIntegration",
      auth: "api_key",
      scope: "agent_integrations.read",
    },
    {
      method: "PUT",
      path: "/v2/agent-integrations/:id",
      handler: "updateAgentIntegration",
      auth: "api_key",
      body: "json",
      scope: "agent_integrations.update",
    },
    {
      method: "DELETE",
      path: "/v2/agent-integrations/:id",
      handler: "deleteAgentIntegration",
      auth: "api_key",
      scope: "agent_integrations.delete",
    },
    {
      method: "GET",
      path: "/v1/agents/:agent/.well-known/agent-card.json",
      handler: "agentCard",
      auth: "api_key",
      scope: "agents.invoke",
    },
    {
      method: "GET",
      path: "/v1/agents/:agent/.well-known/agent.json",
      handler: "agentCard",
      auth: "api_key",
      scope: "agents.invoke",
    },
    {
      method: "POST",
      path: "/v1/agents/:agent",
      handler: "invokeAgent",
      auth: "api_key",
      body: "json",
      scope: "agents.invoke",
      inference: true,
    },
  ],
};
