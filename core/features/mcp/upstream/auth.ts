import { openValue } from "../../../control/sealed-values.ts";
import { guardedFetch } from "../../../security/guarded-dispatcher.ts";
import type { Services } from "../../../services.ts";
import { upstreamAccessToken } from "./oauth-tokens.ts";
import type { McpIntegration, McpServer } from "../records.ts";
import { McpToolError } from "../tool-host.ts";

/**
 * The headers the gateway sends an upstream MCP server, from the integration's stored auth (records.ts):
 * static headers, an OAuth client-credentials token (cached until shortly before it expires), or the calling
 * user's own connection (`oauth_auto`; a workspace-wide token set by an admin when the user has none).
 * Secrets are opened only here and go only to the integration's own URL.
 */
export async function upstreamAuthHeaders(
  services: Services,
  integration: McpIntegration,
  options: { server?: McpServer; userId?: string; signal?: AbortSignal } = {},
): Promise<Record<string, string>> {
  switch (integration.auth_type) {
    case "none":
      return {};
    case "headers":
      return openHeaders(services, integration);
    case "oauth_client_credentials":
      return { authorization: `Bearer ${await clientCredentialsToken(services, integration, options.signal)}` };
    case "oauth_auto":
      return { authorization: `Bearer ${await connectionToken(services, integration, options)}` };
  }
}

async function openHeaders(services: Services, integration: McpIntegration): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [name, sealed] of Object.entries(integration.configurations.headers ?? {})) {
    headers[name.toLowerCase()] = String(await openValue(services.stores.secrets, sealed));
  }
  return headers;
}

/** Client-credentials tokens per integration version: re-fetched after an edit or 30 s before expiry. */
const clientTokens = new Map<string, { token: string; expiresAt: number }>();
const MAX_CACHED_TOKENS = 1000;

async function clientCredentialsToken(
  services: Services,
  integration: McpIntegration,
  signal?: AbortSignal,
): Promise<string> {
  const cacheKey = `${integration.id}@${integration.version}`;
  const cached = clientTokens.get(cacheKey);
  if (cached && cached.expiresAt > Date.now() + 30_000) return cached.token;
  const { client_id: clientId, client_secret: sealedSecret, scope } = integration.configurations;
  if (!clientId || !sealedSecret) {
    throw new McpToolError(502, "The MCP integration's OAuth client credentials are incomplete.", "mcp_auth_missing");
  }
  const fetch = guardedFetch(services.trustedHosts);
  const tokenUrl = integration.configurations.token_url ?? (await discoverTokenUrl(integration.url, fetch));
  const body = new URLSearchParams({ grant_type: "client_credentials" });
  if (scope) body.set("scope", scope);
  const secret = String(await openValue(services.stores.secrets, sealedSecret));
  const response = await fetch(tokenUrl, {
    method: "POST",
    redirect: "manual",
    signal: signal ?? AbortSignal.timeout(15_000),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`,
    },
    body,
  });
  const answer = (await response.json().catch(() => undefined)) as
    | { access_token?: unknown; expires_in?: unknown }
    | undefined;
  if (!response.ok || typeof answer?.access_token !== "string") {
    throw new McpToolError(
      502,
      `The MCP server's token endpoint refused the client (HTTP ${response.status}).`,
      "mcp_auth_failed",
    );
  }
  const lifetime = typeof answer.expires_in === "number" ? answer.expires_in : 3600;
  if (clientTokens.size >= MAX_CACHED_TOKENS) clientTokens.delete(clientTokens.keys().next().value!);
  clientTokens.set(cacheKey, { token: answer.access_token, expiresAt: Date.now() + lifetime * 1000 });
  return answer.access_token;
}

/** The token endpoint named by the upstream's protected-resource and authorization-server metadata. */
async function discoverTokenUrl(serverUrl: string, fetch: typeof globalThis.fetch): Promise<string> {
  const { discoverOAuthServerInfo } = await import("@modelcontextprotocol/client");
  const info = await discoverOAuthServerInfo(serverUrl, { fetchFn: fetch }).catch(() => undefined);
  const tokenUrl = info?.authorizationServerMetadata?.token_endpoint;
  if (!tokenUrl) {
    throw new McpToolError(502, "The MCP server publishes no OAuth token endpoint; set token_url.", "mcp_auth_missing");
  }
  return tokenUrl;
}

/** The calling user's connection token (refreshed when expired), else the workspace-wide one; else they must connect. */
async function connectionToken(
  services: Services,
  integration: McpIntegration,
  options: { server?: McpServer; userId?: string },
): Promise<string> {
  const server = options.server;
  if (!server) {
    throw new McpToolError(
      400,
      `MCP integration ${integration.slug} needs a server to connect through.`,
      "mcp_auth_missing",
    );
  }
  const token =
    (options.userId ? await upstreamAccessToken(services, server, options.userId) : undefined) ??
    (await upstreamAccessToken(services, server, undefined));
  if (token) return token;
  throw new McpToolError(
    403,
    `Connect your account to MCP server ${server.slug} first (GET /oauth/upstream/${server.slug}/connect).`,
    "mcp_connection_required",
  );
}
