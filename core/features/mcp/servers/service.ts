import type { Principal } from "../../../auth/principal.ts";
import { workspaceScope } from "../../../auth/scopes.ts";
import { requiredWorkspace } from "../../../control/access.ts";
import { audit } from "../../../control/deps.ts";
import { Invalid } from "../../../control/errors.ts";
import { type CountedPage, offsetPage } from "../../../control/paging.ts";
import { slugFrom } from "../../../control/credentials/credentials.ts";
import {
  type McpAdminDeps,
  integrationVisible,
  loadServer,
  loadServerWithIntegration,
  serverVisible,
} from "../admin-access.ts";
import { auditServer, presentServer, presentServerCapability, serverMetadata } from "../admin-views.ts";
import { storeSnapshot, testConnection } from "../integrations/service.ts";
import type { McpServerCreateBody, McpServerUpdateBody, ServerMetadataBody } from "./schemas.ts";
import {
  type McpCapabilityType,
  type McpIntegration,
  type McpServer,
  capabilityKey,
  integrationOpenTo,
  mcpIntegrationStore,
  mcpServerStore,
} from "../records.ts";

/**
 * MCP servers (`/v1/mcp-servers`, the portkey-ai SDK's `mcpServers.*`): an integration exposed in one workspace
 * under its own slug, at `<gateway>/mcp/<slug>`. Its capability switches only narrow the integration's; syncing
 * through a server refreshes the integration's snapshot (the upstream is one, whoever asks).
 */

const RESOURCE_TYPE = "mcp_server";

export async function serverChanged(
  deps: McpAdminDeps,
  principal: Principal,
  action: string,
  before: McpServer | undefined,
  after: McpServer | undefined,
) {
  const subject = (after ?? before)!;
  await audit(deps, principal, {
    action,
    resourceType: RESOURCE_TYPE,
    resourceId: subject.id,
    workspaceId: subject.workspaceId,
    before: before && auditServer(before),
    after: after && auditServer(after),
  });
}

export async function createServer(deps: McpAdminDeps, principal: Principal, input: McpServerCreateBody) {
  const workspaceId = requiredWorkspace(principal, input.workspace_id);
  const integration = await mcpIntegrationStore(deps.records).get(principal.organisationId, input.mcp_integration_id);
  // Only an integration open to this workspace: anything else stays unknown to it.
  if (!integration || !integrationVisible(principal, integration) || !integrationOpenTo(integration, workspaceId)) {
    throw new Invalid(`No MCP integration '${input.mcp_integration_id}' this workspace may use.`, {
      param: "mcp_integration_id",
      code: "mcp_integration_not_found",
    });
  }
  const created = await mcpServerStore(deps.records).create(principal.organisationId, {
    slug: input.slug ?? slugFrom(input.name),
    workspaceId,
    name: input.name,
    description: input.description ?? null,
    mcp_integration_id: integration.id,
    capability_overrides: {},
    default_user_access: "allow",
    user_access: [],
    ...((principal.userId ?? principal.keyId) ? { ownerId: principal.userId ?? principal.keyId } : {}),
  });
  await serverChanged(deps, principal, "create", undefined, created);
  return { id: created.id, slug: created.slug, object: "mcp_server", url: presentServer(created, deps.publicUrl).url };
}

export interface ServerListInput {
  workspace_id?: string;
  id?: string;
  search?: string;
  limit: number;
  offset: number;
}

export async function listServers(
  deps: McpAdminDeps,
  principal: Principal,
  input: ServerListInput,
): Promise<CountedPage<ReturnType<typeof presentServer>>> {
  const workspaceId = workspaceScope(principal, input.workspace_id);
  const search = input.search?.trim().toLowerCase();
  const keep = (server: McpServer) =>
    serverVisible(principal, server) &&
    (!workspaceId || server.workspaceId === workspaceId) &&
    (!input.id || server.id === input.id || server.slug === input.id) &&
    (!search || `${server.name}\n${server.slug}`.toLowerCase().includes(search));
  const all = await mcpServerStore(deps.records).listAll(principal.organisationId, keep);
  const page = offsetPage(all, input.offset, input.limit);
  const integrations = new Map<string, McpIntegration | undefined>();
  const items = [];
  for (const server of page.items) {
    if (!integrations.has(server.mcp_integration_id))
      integrations.set(
        server.mcp_integration_id,
        await mcpIntegrationStore(deps.records).get(principal.organisationId, server.mcp_integration_id),
      );
    items.push(presentServer(server, deps.publicUrl, integrations.get(server.mcp_integration_id)));
  }
  return { ...page, items };
}

export async function getServer(deps: McpAdminDeps, principal: Principal, ref: string) {
  const server = await loadServer(deps, principal, ref);
  const integration = await mcpIntegrationStore(deps.records).get(principal.organisationId, server.mcp_integration_id);
  return presentServer(server, deps.publicUrl, integration);
}

export async function updateServer(deps: McpAdminDeps, principal: Principal, ref: string, input: McpServerUpdateBody) {
  const current = await loadServer(deps, principal, ref);
  const changes: Partial<McpServer> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.description !== undefined) changes.description = input.description;
  const updated = await mcpServerStore(deps.records).update(current, changes);
  await serverChanged(deps, principal, "update", current, updated);
  return { id: updated.id, slug: updated.slug, object: "mcp_server" };
}

/** Deletes the server and the users' connections to its upstream (their tokens go with it). */
export async function deleteServer(deps: McpAdminDeps, principal: Principal, ref: string) {
  const server = await loadServer(deps, principal, ref);
  await mcpServerStore(deps.records).delete(server);
  let cursor: string | undefined;
  do {
    const page = await deps.records.query({ partition: `MCPCONN#${server.id}`, limit: 1000, cursor });
    for (const item of page.items) await deps.records.delete(item.pk, item.sk);
    cursor = page.cursor;
  } while (cursor);
  await serverChanged(deps, principal, "delete", server, undefined);
  return { id: server.id, slug: server.slug, object: "mcp_server", deleted: true };
}

export async function testServer(deps: McpAdminDeps, principal: Principal, ref: string) {
  const { server, integration } = await loadServerWithIntegration(deps, principal, ref);
  return testConnection(deps, integration, { server, userId: principal.userId });
}

// --- capabilities ------------------------------------------------------------------------------------------------

export async function getServerCapabilities(deps: McpAdminDeps, principal: Principal, ref: string) {
  const { server, integration } = await loadServerWithIntegration(deps, principal, ref);
  const data = integration.capabilities.map((capability) => presentServerCapability(server, capability));
  return { object: "list", data, total: data.length };
}

/**
 * Narrowing only: `enabled: false` hides a capability on this server, `enabled: true` undoes that; enabling one the
 * integration disabled is a 400 (that switch is the integration's owner's).
 */
export async function updateServerCapabilities(
  deps: McpAdminDeps,
  principal: Principal,
  ref: string,
  input: { capabilities: Array<{ name: string; type: McpCapabilityType; enabled: boolean }> },
) {
  const { server, integration } = await loadServerWithIntegration(deps, principal, ref);
  const overrides = { ...server.capability_overrides };
  input.capabilities.forEach((item, index) => {
    const key = capabilityKey(item.type, item.name);
    const capability = integration.capabilities.find((known) => capabilityKey(known.type, known.name) === key);
    if (!capability)
      throw new Invalid(`The integration has no ${item.type} '${item.name}'.`, {
        param: `capabilities[${index}].name`,
        code: "capability_not_found",
      });
    if (item.enabled && !capability.enabled)
      throw new Invalid(`The integration disabled ${item.type} '${item.name}'; a server can only narrow it.`, {
        param: `capabilities[${index}].enabled`,
        code: "capability_disabled_by_integration",
      });
    if (item.enabled) delete overrides[key];
    else overrides[key] = false;
  });
  const updated = await mcpServerStore(deps.records).update(server, { capability_overrides: overrides });
  await serverChanged(deps, principal, "update_capabilities", server, updated);
  const data = integration.capabilities.map((capability) => presentServerCapability(updated, capability));
  return { object: "list", data, total: data.length };
}

/** Reads the upstream afresh through the integration (with this server's auth) and stores what it offers. */
export async function syncServerCapabilities(deps: McpAdminDeps, principal: Principal, ref: string) {
  const { server, integration } = await loadServerWithIntegration(deps, principal, ref);
  const outcome = await storeSnapshot(deps, principal, integration, undefined, { server, userId: principal.userId });
  if (!outcome.ok) return outcome;
  const refreshed =
    (await mcpIntegrationStore(deps.records).get(principal.organisationId, integration.id)) ?? integration;
  const data = refreshed.capabilities.map((capability) => presentServerCapability(server, capability));
  return { ok: true as const, body: { ...outcome.body, object: "list", data, total: data.length } };
}

// --- metadata ----------------------------------------------------------------------------------------------------

export async function getServerMetadata(deps: McpAdminDeps, principal: Principal, ref: string) {
  const { server, integration } = await loadServerWithIntegration(deps, principal, ref);
  return { id: server.id, ...serverMetadata(server, integration) };
}

/** With fields: this server's own metadata (shown over the integration's). Without: a fresh pull from the upstream. */
export async function syncServerMetadata(
  deps: McpAdminDeps,
  principal: Principal,
  ref: string,
  input: ServerMetadataBody,
) {
  const { server, integration } = await loadServerWithIntegration(deps, principal, ref);
  if (Object.keys(input).length === 0) {
    const outcome = await storeSnapshot(deps, principal, integration, undefined, { server, userId: principal.userId });
    if (!outcome.ok) return outcome;
    const refreshed = await mcpIntegrationStore(deps.records).get(principal.organisationId, integration.id);
    return { ok: true as const, body: { id: server.id, ...serverMetadata(server, refreshed) } };
  }
  const metadata = { ...(server.metadata ?? {}), ...input };
  const updated = await mcpServerStore(deps.records).update(server, { metadata });
  await serverChanged(deps, principal, "update_metadata", server, updated);
  return { ok: true as const, body: { id: updated.id, ...serverMetadata(updated, integration) } };
}
