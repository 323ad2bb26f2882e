import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { checkCustomHost } from "../security/custom-host.ts";
import { type AnswerLimit, guardedFetch } from "../security/guarded-dispatcher.ts";
import type { Services } from "../services.ts";
import type { McpIntegration } from "./records.ts";

/**
 * An MCP SDK client connected to an integration's upstream server (streamable HTTP, or the older SSE transport),
 * every request through the SSRF guard, every answer bounded (MCP_MAX_RESPONSE_BYTES), with the auth headers
 * the caller resolved (upstream-auth.ts). The SDK is
 * loaded on first use so families that never talk MCP do not pay for it at cold start.
 */
export async function connectUpstream(
  services: Services,
  integration: Pick<McpIntegration, "url" | "transport">,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<Client> {
  const url = await checkCustomHost(integration.url, services.trustedHosts, "url");
  let client: Client | undefined;
  // An answer over MCP_MAX_RESPONSE_BYTES errors its body; the client is closed too, or a request whose answer
  // was to come on that (SSE) stream would wait for its timeout. Its callers see the size error, not "closed".
  const limit: AnswerLimit = {
    maxBytes: services.settings.MCP_MAX_RESPONSE_BYTES,
    what: "The MCP server's answer",
    setting: "MCP_MAX_RESPONSE_BYTES",
    onTooLarge(error) {
      if (!client || tooLargeOf.has(client)) return;
      tooLargeOf.set(client, error);
      void client.close().catch(() => {});
    },
  };
  const [{ Client }, transport] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    createTransport(guardedFetch(services.trustedHosts, limit), integration.transport, url, headers),
  ]);
  client = new Client({ name: "ai-gateway", version: "1.0.0" });
  await client.connect(transport, { signal, timeout: 30_000 });
  return client;
}

/** Clients closed because an answer passed the size limit, with that refusal. */
const tooLargeOf = new WeakMap<Client, Error>();

/**
 * What a failed call on `client` should report: the size refusal when an answer too large is what ended the
 * client (its pending requests fail with "connection closed" otherwise), else the error itself.
 */
export function upstreamFailureOf(client: Client | undefined, error: unknown): unknown {
  return (client && tooLargeOf.get(client)) ?? error;
}

async function createTransport(
  fetch: typeof globalThis.fetch,
  transport: McpIntegration["transport"],
  url: URL,
  headers: Record<string, string>,
) {
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
