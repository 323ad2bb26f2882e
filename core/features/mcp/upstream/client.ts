import { createHash } from "node:crypto";
import type { Client, ClientCapabilities, PriorDiscovery, ResponseCacheStore } from "@modelcontextprotocol/client";
import { checkCustomHost } from "../../../security/custom-host.ts";
import { type AnswerLimit, guardedFetch } from "../../../security/guarded-dispatcher.ts";
import type { Services } from "../../../services.ts";
import type { McpIntegration } from "../records.ts";
import { eraVerdicts } from "./era-verdicts.ts";
import { loadOnce } from "../../../util/load-once.ts";

/** The MCP client SDK, loaded with the first upstream connection and kept. */
const mcpClientSdk = loadOnce(() => import("@modelcontextprotocol/client"));

/**
 * An MCP SDK (v2) client connected to an integration's upstream server, whatever revision it speaks: the client
 * negotiates the era (`versionNegotiation: 'auto'`: a `server/discover` probe, falling back to `initialize` for
 * a 2025-era server), and the verdict is kept per upstream and credential (era-verdicts.ts) so that later
 * connections adopt it without a round trip (a 2026-07-28 upstream then costs no handshake at all). Every
 * request goes through the SSRF guard with the auth headers the caller resolved (upstream/auth.ts), every answer
 * bounded (MCP_MAX_RESPONSE_BYTES). List
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
  const sdk = await mcpClientSdk.get();
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
  // An answer over MCP_MAX_RESPONSE_BYTES errors its body; the client is closed too, or a request whose answer
  // was to come on that (SSE) stream would wait for its timeout. Its callers see the size error, not "closed".
  const limit: AnswerLimit = {
    maxBytes: services.settings.MCP_MAX_RESPONSE_BYTES,
    what: "The MCP server's answer",
    setting: "MCP_MAX_RESPONSE_BYTES",
    onTooLarge(error) {
      if (tooLargeOf.has(client)) return;
      tooLargeOf.set(client, error);
      void client.close().catch(() => {});
    },
  };
  const fetch = guardedFetch(services.trustedHosts, limit);
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

/** Clients closed because an answer passed the size limit, with that refusal. */
const tooLargeOf = new WeakMap<Client, Error>();

/**
 * What a failed call on `client` should report: the size refusal when an answer too large is what ended the
 * client (its pending requests fail with "connection closed" otherwise), else the error itself.
 */
export function upstreamFailureOf(client: Client | undefined, error: unknown): unknown {
  return (client && tooLargeOf.get(client)) ?? error;
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
