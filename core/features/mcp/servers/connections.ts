import type { Principal } from "../../../auth/principal.ts";
import { managesWorkspace } from "../../../auth/scopes.ts";
import { audit } from "../../../control/deps.ts";
import { Forbidden, Invalid, NotFound } from "../../../control/errors.ts";
import { offsetPage } from "../../../control/paging.ts";
import { hintOf, sealValue } from "../../../control/sealed-values.ts";
import { type McpAdminDeps, loadServer, loadServerWithIntegration } from "../admin-access.ts";
import { type McpConnection, type McpServer, connectionKey } from "../records.ts";
import type { TokensSetBody } from "./schemas.ts";

/**
 * A server's upstream tokens (records.ts connections): `/tokens` is the calling user's own connection (a service
 * key, acting for no user, sets the workspace-wide one that serves users without their own); `/connections` lists
 * and removes users' connections. Tokens are sealed and never answered: only whether one is set, its hint and
 * when it expires.
 */

const RESOURCE_TYPE = "mcp_connection";

const nowSeconds = () => Math.floor(Date.now() / 1000);
const iso = (seconds: number | undefined) => (seconds ? new Date(seconds * 1000).toISOString() : null);

/** The connection the caller's token routes address: its user's, or the workspace's for a caller without a user. */
const ownKey = (server: McpServer, principal: Principal) => connectionKey(server.id, principal.userId);

function presentConnection(connection: McpConnection) {
  return {
    object: "mcp_connection" as const,
    server_id: connection.serverId,
    workspace_id: connection.workspaceId,
    user_id: connection.userId ?? null,
    type: connection.userId ? "user" : "workspace",
    scope: connection.scope ?? null,
    expires_at: iso(connection.expires_at),
    expired: !!connection.expires_at && connection.expires_at <= nowSeconds(),
    created_at: iso(connection.createdAt),
    updated_at: iso(connection.updatedAt),
  };
}

async function readConnection(deps: McpAdminDeps, key: { pk: string; sk: string }) {
  return (await deps.records.get(key.pk, key.sk)) as (McpConnection & { pk: string; sk: string }) | undefined;
}

export async function getTokens(deps: McpAdminDeps, principal: Principal, ref: string) {
  const server = await loadServer(deps, principal, ref);
  const own = await readConnection(deps, ownKey(server, principal));
  const shared = own || !principal.userId ? undefined : await readConnection(deps, connectionKey(server.id));
  const connection = own ?? shared;
  if (!connection) return { id: server.id, has_token: false, access_token: null, has_refresh_token: false };
  return {
    id: server.id,
    has_token: true,
    access_token: hintOf(connection.access_token),
    has_refresh_token: !!connection.refresh_token,
    ...presentConnection(connection),
  };
}

export async function setTokens(deps: McpAdminDeps, principal: Principal, ref: string, input: TokensSetBody) {
  const server = await loadServer(deps, principal, ref);
  if (!principal.userId && !managesWorkspace(principal, server.workspaceId))
    throw new Forbidden("Only a manager of the server's workspace may set its workspace-wide token.", {
      code: "workspace_manager_required",
    });
  const key = ownKey(server, principal);
  const before = await readConnection(deps, key);
  const now = nowSeconds();
  const secrets = deps.services.stores.secrets;
  const expiresAt = input.expires_at ?? (input.expires_in ? now + input.expires_in : undefined);
  const connection: McpConnection = {
    serverId: server.id,
    organisationId: server.organisationId,
    workspaceId: server.workspaceId,
    ...(principal.userId ? { userId: principal.userId } : {}),
    access_token: await sealValue(secrets, input.access_token),
    ...(input.refresh_token ? { refresh_token: await sealValue(secrets, input.refresh_token) } : {}),
    ...(expiresAt ? { expires_at: expiresAt } : {}),
    ...(input.scope ? { scope: input.scope } : {}),
    ...(before?.client ? { client: before.client } : {}),
    createdAt: before?.createdAt ?? now,
    updatedAt: now,
  };
  await deps.records.put({ ...key, ...connection });
  await audit(deps, principal, {
    action: before ? "update" : "create",
    resourceType: RESOURCE_TYPE,
    resourceId: server.id,
    workspaceId: server.workspaceId,
    before: before && presentConnection(before),
    after: presentConnection(connection),
  });
  return {
    id: server.id,
    has_token: true,
    access_token: hintOf(connection.access_token),
    ...presentConnection(connection),
  };
}

/** Deletes a connection's record, audited (its public view, never the tokens). */
async function removeConnection(
  deps: McpAdminDeps,
  principal: Principal,
  server: McpServer,
  key: { pk: string; sk: string },
  before: Parameters<typeof presentConnection>[0],
): Promise<void> {
  await deps.records.delete(key.pk, key.sk);
  await audit(deps, principal, {
    action: "delete",
    resourceType: RESOURCE_TYPE,
    resourceId: server.id,
    workspaceId: server.workspaceId,
    before: presentConnection(before),
  });
}

export async function deleteTokens(deps: McpAdminDeps, principal: Principal, ref: string) {
  const server = await loadServer(deps, principal, ref);
  const key = ownKey(server, principal);
  const before = await readConnection(deps, key);
  if (!before)
    throw new NotFound("No token is set for this caller on this MCP server.", { code: "mcp_token_not_found" });
  if (!principal.userId && !managesWorkspace(principal, server.workspaceId))
    throw new Forbidden("Only a manager of the server's workspace may remove its workspace-wide token.", {
      code: "workspace_manager_required",
    });
  await removeConnection(deps, principal, server, key, before);
  return { id: server.id, deleted: true };
}

/** The OAuth client the gateway uses with the upstream: configured on the integration, or registered by the gateway. */
export async function getClientInfo(deps: McpAdminDeps, principal: Principal, ref: string) {
  const { server, integration } = await loadServerWithIntegration(deps, principal, ref);
  const { client_id, client_secret, token_url, scope } = integration.configurations;
  if (client_id)
    return {
      id: server.id,
      auth_type: integration.auth_type,
      source: "integration",
      client_id,
      has_client_secret: !!client_secret,
      token_url: token_url ?? null,
      scope: scope ?? null,
    };
  const own = await readConnection(deps, ownKey(server, principal));
  const registered = own?.client ?? (await readConnection(deps, connectionKey(server.id)))?.client;
  return {
    id: server.id,
    auth_type: integration.auth_type,
    source: registered ? "registered" : null,
    client_id: registered?.client_id ?? null,
    has_client_secret: !!registered?.client_secret,
    token_url: registered?.token_url ?? null,
    scope: scope ?? null,
  };
}

/** Users' connections: all of them for managers of the server's workspace; a user sees only their own. */
export async function listConnections(
  deps: McpAdminDeps,
  principal: Principal,
  ref: string,
  input: { user_id?: string; workspace_id?: string; limit: number; offset: number },
) {
  const server = await loadServer(deps, principal, ref);
  const manager = managesWorkspace(principal, server.workspaceId);
  if (!manager && !principal.userId)
    throw new Forbidden("Only a manager of the server's workspace may list its connections.", {
      code: "workspace_manager_required",
    });
  const all: McpConnection[] = [];
  if (!input.workspace_id || input.workspace_id === server.workspaceId) {
    let cursor: string | undefined;
    do {
      const page = await deps.records.query({
        partition: `MCPCONN#${server.id}`,
        prefix: "USER#",
        limit: 1000,
        cursor,
      });
      for (const item of page.items) {
        const connection = item as unknown as McpConnection;
        if (!manager && connection.userId !== principal.userId) continue;
        if (input.user_id && connection.userId !== input.user_id) continue;
        all.push(connection);
      }
      cursor = page.cursor;
    } while (cursor);
  }
  const page = offsetPage(all, input.offset, input.limit);
  return { ...page, items: page.items.map(presentConnection) };
}

/** An admin (manager of the workspace) removes anyone's connection; a user their own (`user_id` may be left out). */
export async function deleteConnection(
  deps: McpAdminDeps,
  principal: Principal,
  ref: string,
  input: { user_id?: string; workspace_id?: string },
) {
  const server = await loadServer(deps, principal, ref);
  if (input.workspace_id && input.workspace_id !== server.workspaceId)
    throw new NotFound("No such connection.", { code: "mcp_connection_not_found" });
  const userId = input.user_id ?? principal.userId;
  if (!userId) throw new Invalid("user_id is required.", { param: "user_id", code: "missing_required_parameter" });
  if (userId !== principal.userId && !managesWorkspace(principal, server.workspaceId))
    throw new Forbidden("Only a manager of the server's workspace may remove another user's connection.", {
      code: "workspace_manager_required",
    });
  const key = connectionKey(server.id, userId);
  const before = await readConnection(deps, key);
  if (!before) throw new NotFound("No such connection.", { code: "mcp_connection_not_found" });
  await removeConnection(deps, principal, server, key, before);
  return { id: server.id, user_id: userId, deleted: true };
}
