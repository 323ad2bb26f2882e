import type { Transport } from "@a2a-js/sdk/client";
import type { TrustedHosts } from "../security/custom-host.ts";
import { guardedFetch } from "../security/guarded-dispatcher.ts";

/**
 * How the gateway talks to an upstream agent: through the A2A SDK's own client transports (JSON-RPC or REST, A2A
 * 1.0 or 0.3, as the stored card offers), over the guarded dispatcher (an upstream card naming a private
 * address is refused at connect time), with the integration's stored headers and nothing of the caller's, every
 * answer bounded (AGENT_MAX_RESPONSE_BYTES).
 * Redirects are not followed.
 */

export function upstreamFetch(
  trustedHosts: TrustedHosts,
  headers: Record<string, string>,
  maxAnswerBytes: number,
): typeof fetch {
  // Each answer is bounded (an event stream, per event): past it the call fails 502 upstream_response_too_large.
  const fetchGuarded = guardedFetch(trustedHosts, {
    maxBytes: maxAnswerBytes,
    what: "The agent's answer",
    setting: "AGENT_MAX_RESPONSE_BYTES",
  });
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    const response = await fetchGuarded(input, { ...init, headers: merged, redirect: "manual" });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {});
      throw new Error(`The upstream agent answered a redirect (HTTP ${response.status}); redirects are not followed.`);
    }
    return response;
  }) as typeof fetch;
}

/** The SDK transport the upstream card prefers, built from the stored card. */
export async function upstreamTransport(card: Record<string, unknown>, fetchImpl: typeof fetch): Promise<Transport> {
  const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } = await import(
    "@a2a-js/sdk/client"
  );
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
      new RestTransportFactory({ fetchImpl, legacyCompat }),
    ],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
  });
  const client = await factory.createFromAgentCard(card as never);
  return client.transport;
}
