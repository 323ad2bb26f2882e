import type { AgentCardJson } from "./card-rules.ts";

/**
 * The card the gateway serves for an agent integration: the upstream's card, with every endpoint replaced by the
 * gateway's own (`url` for A2A 0.3 clients, `supportedInterfaces` for 1.0 clients: JSON-RPC at both versions)
 * and security schemes that describe the gateway's authentication instead of the upstream's. Signatures and
 * push notifications are dropped: the first no longer match, the second the gateway does not relay.
 */

export const GATEWAY_SECURITY_SCHEMES = {
  gatewayApiKey: {
    type: "apiKey",
    in: "header",
    name: "x-gateway-api-key",
    description: "A gateway API key with the agents.invoke scope.",
  },
  gatewayJwt: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A JWT the gateway accepts, granting agents.invoke.",
  },
};

export function gatewayAgentCard(upstream: AgentCardJson, endpoint: string): Record<string, unknown> {
  const {
    additionalInterfaces: _additional,
    supportedInterfaces: _supported,
    securityRequirements: _requirements,
    signatures: _signatures,
    ...rest
  } = upstream;
  const capabilities = typeof rest.capabilities === "object" && rest.capabilities !== null ? rest.capabilities : {};
  return {
    ...rest,
    url: endpoint,
    preferredTransport: "JSONRPC",
    protocolVersion: "0.3.0",
    supportedInterfaces: [
      { url: endpoint, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: endpoint, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
    ],
    capabilities: { ...capabilities, pushNotifications: false, extendedAgentCard: false },
    supportsAuthenticatedExtendedCard: false,
    securitySchemes: GATEWAY_SECURITY_SCHEMES,
    security: [{ gatewayApiKey: [] }, { gatewayJwt: [] }],
  };
}
