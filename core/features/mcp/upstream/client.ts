import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { checkCustomHost } from "../../../security/custom-host.ts";
import { guardedFetch } from "../../../security/guarded-dispatcher.ts";
import type { Services } from "../../../services.ts";
import type { McpIntegration } from "../records.ts";

/**
 * An MCP SDK client connected to an integration's upstream server (streamable HTTP, or the older SSE transport),
 * every request through the SSRF guard, with the auth headers the caller resolved (upstream-auth.ts). The SDK is
 * loaded on first use so families that never talk MCP do not pay for it at cold start.
 */
export async function connectUpstream(
  services: Services,
  integration: Pick<McpIntegration, "url" | "transport">,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<Client> {
  const url = await checkCustomHost(integration.url, services.trustedHosts, "url");
  const [{ Client }, transport] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    createTransport(services, integration.transport, url, headers),
  ]);
  const client = new Client({ name: "ai-gateway", version: "1.0.0" });
  await client.connect(transport, { signal, timeout: 30_000 });
  return client;
}

async function createTransport(
  services: Services,
  transport: McpIntegration["transport"],
  url: URL,
  headers: Record<string, string>,
) {
  const fetch = guardedFetch(services.trustedHosts);
  const requestInit: RequestInit = { headers };
  if (transport === "sse") {
    const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
    return new SSEClientTransport(url, { requestInit, fetch });
  }
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  return new StreamableHTTPClientTransport(url, { requestInit, fetch });
}

/**
 * Ends an upstream client: a stateful upstream's session is terminated first (HTTP DELETE with its session id;
 * best effort, bounded), since the gateway opens one per request and a server keeps sessions until told.
 */
export async function closeUpstream(client: Client): Promise<void> {
  const transport = client.transport as { sessionId?: string; terminateSession?: () => Promise<void> } | undefined;
  if (transport?.sessionId && transport.terminateSession) {
    await Promise.race([
      transport.terminateSession().catch(() => {}),
      new Promise((resolve) => setTimeout(resolve, 5_000).unref?.()),
    ]);
  }
  await client.close().catch(() => {});
}
