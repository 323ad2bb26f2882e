import type { RouteFamily, RouteSpec } from "../../http/route-types.ts";

/**
 * The MCP gateway (core/features/mcp; docs/mcp.md): one streamable-HTTP MCP endpoint per server (stateless; the
 * handler authenticates itself, to answer 401 with the OAuth protected-resource challenge), and the MCP
 * registry API's list of the servers a caller may use.
 */
export const family: RouteFamily = {
  name: "mcp",
  dataPlane: true,
  timeoutSeconds: 900,
  routes: [
    ...(["POST", "GET", "DELETE"] as const).map(
      (method): RouteSpec => ({
        method,
        path: "/mcp/:server",
        handler: "mcpEndpoint",
        auth: "none",
        body: "json",
        cors: true,
      }),
    ),
    { method: "GET", path: "/v0.1/servers", handler: "registryServers", auth: "api_key", cors: true },
  ],
};
