import { createHash } from "node:crypto";
import type { Client, ClientCapabilities, PriorDiscovery, ResponseCacheStore } from "@modelcontextprotocol/client";
import { checkCustomHost } from "../../../security/custom-host.ts";
import { guardedFetch } from "../../../security/guarded-dispatcher.ts";
import type { Services } from "../../../services.ts";
import type { McpIntegration } from "../records.ts";
import { eraVerdicts } from "./era-verdicts.ts";

/**
 * An MCP SDK (v2) client connected to an integration's upstream server, whatever revision it speaks: the client
 * negotiates the era (`versionNegotiation: 'auto'`: a `server/discover` probe, falling back to `initialize` for
 * a 2025-era server), and the verdict is kept per upstream and credential (era-verdicts.ts) so that later
 * connections adopt it without a round trip (a 2026-07-28 upstream then costs no handshake at all). Every
 * request goes through the SSRF guard with the auth headers the caller resolved (upstream/auth.ts). List
 * results are cached by the SDK as the upstream's `ttlMs` / `cacheScope` hints say, in one store per process
 * shared by every client, partitioned by credential so one caller's private answer never serves another's.
 * The older SSE transport speaks only the 2025 era. The SDK is loaded on first use so families that never
 * talk MCP do not pay for it at cold start.
 */
export async function connectUpstream(
  services: Services,
  integration: Pick<McpIntegration, "url" | "transport">,
  headers: Record<string, string>,
  signal?: AbortSignal,
  /** What the gateway's caller declared (2026-07-28), declared in its name; none otherwise. */
  capabilities?: ClientCapabilities,
): Promise<Client> {
  const url = await checkCustomHost(integration.url, services.trustedHosts, "url");
  const sdk = await import("@modelcontextprotocol/client");
  // The authorization context: the upstream URL and the credential headers the gateway sends it.
  const partition = createHash("sha256")
    .update(JSON.stringify([url.href, Object.entries(headers).sort()]))
    .digest("hex");
  const client = new sdk.Client(
    { name: "ai-gateway", version: "1.0.0" },
    {
      versionNegotiation: { mode: integration.transport === "sse" ? "legacy" : "auto" },
      responseCacheStore: sharedCacheStore(sdk.InMemoryResponseCacheStore),
      cachePartition: partition,
      // `input_required` results go back to the gateway's caller as they are (forwarding.ts).
      inputRequired: { autoFulfill: false },
      ...(capabilities ? { capabilities } : {}),
    },
  );
  const fetch = guardedFetch(services.trustedHosts);
  const requestInit: RequestInit = { headers };
  const transport =
    integration.transport === "sse"
      ? new sdk.SSEClientTransport(url, { requestInit, fetch })
      : new sdk.StreamableHTTPClientTransport(url, { requestInit, fetch });
  const known: PriorDiscovery | undefined = integration.transport === "sse" ? undefined : eraVerdicts.get(partition);
  try {
    await client.connect(transport, { signal, timeout: 30_000, ...(known ? { prior: known } : {}) });
  } catch (error) {
    // A stale verdict (the upstream changed era) fails loudly: forget it so the next connection probes again.
    if (known) eraVerdicts.forget(partition);
    throw error;
  }
  if (!known && integration.transport !== "sse") eraVerdicts.remember(partition, client);
  return client;
}

let cacheStore: ResponseCacheStore | undefined;
function sharedCacheStore(Store: new (options?: { maxEntries?: number }) => ResponseCacheStore): ResponseCacheStore {
  cacheStore ??= new Store({ maxEntries: 2048 });
  return cacheStore;
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
