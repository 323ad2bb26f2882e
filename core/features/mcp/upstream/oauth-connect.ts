import type { Principal } from "../../../auth/principal.ts";
import { recordAudit } from "../../../control/audit.ts";
import { Forbidden, Invalid, NotFound, Unauthenticated } from "../../../control/errors.ts";
import { getMembership } from "../../../control/workspaces/members.ts";
import { openValue, sealValue } from "../../../control/sealed-values.ts";
import { guardedFetch } from "../../../security/guarded-dispatcher.ts";
import type { Services } from "../../../services.ts";
import {
  type McpIntegration,
  type McpServer,
  integrationOpenTo,
  mcpIntegrationStore,
  mcpServerStore,
  userMayUse,
} from "../records.ts";
import { UpstreamOAuthProvider } from "./oauth-provider.ts";
import { readConnection, savePendingConnect, takePendingConnect, writeConnection } from "./oauth-records.ts";

/**
 * Per-user OAuth to an upstream MCP server (`oauth_auto`): the gateway is the OAuth client. `connect` runs the MCP
 * SDK's flow (protected-resource and authorization-server discovery, dynamic registration, PKCE) up to the
 * upstream's authorize URL, and keeps the verifier under a state bound to the user and the server; the callback
 * exchanges the code and stores the user's connection, tokens sealed. Every request goes through the SSRF guard.
 */

export const upstreamCallbackUrl = (base: string) => `${base}/oauth/upstream/callback`;

const elevated = (principal: Principal) =>
  principal.organisationRole === "owner" || principal.organisationRole === "admin";

/** The server and its integration, when `principal` (a user) may connect to it. */
async function connectable(
  services: Services,
  principal: Principal,
  serverRef: string,
): Promise<{ server: McpServer; integration: McpIntegration }> {
  const records = services.stores.records;
  const unknown = () => new NotFound(`Unknown MCP server '${serverRef.slice(0, 200)}'.`);
  const server = await mcpServerStore(records).get(principal.organisationId, serverRef);
  if (!server) throw unknown();
  if (principal.workspaceId && principal.workspaceId !== server.workspaceId) throw unknown();
  const userId = principal.userId!;
  if (!principal.workspaceId && !elevated(principal) && !(await getMembership(records, server.workspaceId, userId))) {
    throw unknown();
  }
  if (!userMayUse(server, userId)) {
    throw new Forbidden("You may not use this MCP server.", { code: "mcp_server_access_denied" });
  }
  const integration = await mcpIntegrationStore(records).get(principal.organisationId, server.mcp_integration_id);
  if (!integration || !integrationOpenTo(integration, server.workspaceId)) throw unknown();
  if (integration.auth_type !== "oauth_auto") {
    throw new Invalid("This MCP server does not use per-user OAuth.", { code: "mcp_oauth_not_used" });
  }
  return { server, integration };
}

/** The upstream authorize URL to send the user's browser to. */
export async function startConnect(
  services: Services,
  principal: Principal,
  serverRef: string,
  base: string,
): Promise<URL> {
  if (!principal.userId) {
    throw new Forbidden("Connecting to an MCP server needs a user: sign in, or use a user API key.", {
      code: "user_required",
    });
  }
  const { server, integration } = await connectable(services, principal, serverRef);
  const provider = new UpstreamOAuthProvider(services.stores, integration, upstreamCallbackUrl(base));
  const { auth } = await import("@modelcontextprotocol/client");
  const result = await auth(provider, {
    serverUrl: integration.url,
    fetchFn: guardedFetch(services.trustedHosts),
  }).catch((error: unknown) => {
    throw upstreamFailure(error);
  });
  if (result !== "REDIRECT" || !provider.authorizationUrl || !provider.stateParameter || !provider.pkceVerifier) {
    throw new Invalid("The upstream authorization server did not start an authorization.", {
      code: "mcp_oauth_failed",
    });
  }
  await savePendingConnect(services.stores.records, provider.stateParameter, {
    organisationId: server.organisationId,
    workspaceId: server.workspaceId,
    serverId: server.id,
    userId: principal.userId,
    codeVerifier: await sealValue(services.stores.secrets, provider.pkceVerifier),
    discovery: provider.discoveryState(),
  });
  return provider.authorizationUrl;
}

function upstreamFailure(error: unknown): Error {
  // The reason goes to the operator's log; the user gets a plain refusal (no upstream bodies, no tokens).
  console.error(`MCP upstream OAuth failed: ${(error as Error)?.message}`);
  return new Invalid("The upstream MCP server's authorization failed.", { code: "mcp_oauth_failed" });
}

/** Handles the upstream's redirect back: exchanges the code once and stores the user's connection. */
export async function finishConnect(
  services: Services,
  query: URLSearchParams,
  base: string,
  traceId: string,
): Promise<{ server: McpServer }> {
  const records = services.stores.records;
  const pending = await takePendingConnect(records, query.get("state") ?? "");
  if (!pending) throw new Unauthenticated("This connection attempt has expired or was already used. Start again.");
  if (query.get("error")) throw new Forbidden("The upstream authorization server refused the connection.");
  const code = query.get("code");
  if (!code) throw new Invalid("The callback has no code.", { param: "code" });
  const server = await mcpServerStore(records).get(pending.organisationId, pending.serverId);
  const integration =
    server && (await mcpIntegrationStore(records).get(server.organisationId, server.mcp_integration_id));
  if (!server || !integration || integration.auth_type !== "oauth_auto") throw new NotFound("The MCP server is gone.");
  const codeVerifier = (await openValue(services.stores.secrets, pending.codeVerifier)) as string;
  const provider = new UpstreamOAuthProvider(services.stores, integration, upstreamCallbackUrl(base), {
    codeVerifier,
    discovery: pending.discovery,
  });
  const { auth } = await import("@modelcontextprotocol/client");
  await auth(provider, {
    serverUrl: integration.url,
    authorizationCode: code,
    fetchFn: guardedFetch(services.trustedHosts),
  }).catch((error: unknown) => {
    throw upstreamFailure(error);
  });
  const tokens = provider.savedTokens;
  const discovery = provider.discoveryState();
  const client = await provider.clientInformation();
  if (!tokens || !discovery || !client) throw upstreamFailure(new Error("no tokens after the code exchange"));
  const secrets = services.stores.secrets;
  const now = Math.floor(Date.now() / 1000);
  const existing = await readConnection(records, server.id, pending.userId);
  await writeConnection(records, {
    serverId: server.id,
    organisationId: server.organisationId,
    workspaceId: server.workspaceId,
    userId: pending.userId,
    access_token: await sealValue(secrets, tokens.access_token),
    ...(tokens.refresh_token ? { refresh_token: await sealValue(secrets, tokens.refresh_token) } : {}),
    ...(tokens.expires_in ? { expires_at: now + tokens.expires_in } : {}),
    ...(tokens.scope ? { scope: tokens.scope } : {}),
    client: {
      client_id: client.client_id,
      ...(client.client_secret ? { client_secret: await sealValue(secrets, client.client_secret) } : {}),
      token_url: String(discovery.authorizationServerMetadata?.token_endpoint ?? ""),
    },
    upstream: {
      authorization_server: discovery.authorizationServerUrl,
      discovery,
      resource: discovery.resourceMetadata?.resource,
    },
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  });
  await recordAudit(records, {
    principal: { kind: "session", organisationId: server.organisationId, userId: pending.userId, scopes: [] },
    traceId,
    action: existing ? "update" : "create",
    resourceType: "mcp_connection",
    resourceId: `${server.id}:${pending.userId}`,
    workspaceId: server.workspaceId,
    after: { server_id: server.id, user_id: pending.userId, scope: tokens.scope ?? null },
  });
  return { server };
}
