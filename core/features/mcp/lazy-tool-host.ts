import type { Services } from "../../services.ts";
import type { McpToolHost } from "./tool-host.ts";

/**
 * The MCP gateway's tool host, loaded on first use: every family's services hold one, but only requests that
 * name server-side MCP tools call it, so the MCP client, its upstream auth and logs stay out of cold starts.
 */
export function lazyMcpToolHost(services: Services): McpToolHost {
  let host: Promise<McpToolHost> | undefined;
  const load = () =>
    (host ??= import("./gateway-tool-host.ts").then(({ createMcpToolHost }) => createMcpToolHost(services)));
  return {
    listTools: async (principal, serverRef) => (await load()).listTools(principal, serverRef),
    callTool: async (principal, serverRef, call, context) =>
      (await load()).callTool(principal, serverRef, call, context),
    listContext: async (principal, serverRef) => (await load()).listContext!(principal, serverRef),
    useContext: async (principal, serverRef, request, context) =>
      (await load()).useContext!(principal, serverRef, request, context),
  };
}
