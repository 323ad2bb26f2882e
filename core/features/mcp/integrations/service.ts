import type { Principal } from "../../../auth/principal.ts";
import { isOrganisationWide, workspaceScope } from "../../../auth/scopes.ts";
import { audit, changed } from "../../../control/deps.ts";
import { Conflict, Forbidden, Invalid } from "../../../control/errors.ts";
import { type CountedPage, offsetPage } from "../../../control/paging.ts";
import { slugFrom } from "../../../control/credentials/credentials.ts";
import { workspaceStore } from "../../../control/workspaces/store.ts";
import { checkCustomHost } from "../../../security/custom-host.ts";
import {
  type McpAdminDeps,
  assertOwnOrganisation,
  integrationVisible,
  loadIntegration,
  loadWritableIntegration,
} from "../admin-access.ts";
import { presentCapability, presentIntegration, presentMetadata } from "../admin-views.ts";
import { checkConfigurations, mergeConfigurations } from "./configurations.ts";
import { capabilityCounts, failedInfo, pullSnapshot, snapshotFromBody } from "./sync.ts";
import type {
  CapabilitySwitchesBody,
  McpIntegrationCreateBody,
  McpIntegrationSyncBody,
  McpIntegrationUpdateBody,
  McpWorkspacesUpdateBody,
} from "./schemas.ts";
import {
  type McpIntegration,
  type McpServer,
  capabilityKey,
  integrationOpenTo,
  mcpIntegrationStore,
  mcpServerStore,
} from "../records.ts";

/**
 * MCP integrations (`/v1/mcp-integrations`, the portkey-ai SDK's `mcpIntegrations.*`): upstream MCP servers the
 * organisation registers. One with `workspace_id` (or made by a workspace key) belongs to that workspace and serves
 * only it; one without is organisation-wide, made by organisation-level callers only, and open to the workspaces
 * `PUT /:id/workspaces` enables (or to all with `global_workspace_access`). Deleting one that servers still expose
 * is refused (409): delete the servers first, so nothing disappears from a workspace by surprise.
 */

const RESOURCE_TYPE = "mcp_integration";

const secretsOf = (deps: McpAdminDeps) => ({
  secrets: deps.services.stores.secrets,
  trustedHosts: deps.services.trustedHosts,
});

export async function createIntegration(deps: McpAdminDeps, principal: Principal, input: McpIntegrationCreateBody) {
  assertOwnOrganisation(principal, input.organisation_id);
  const workspaceId = workspaceScope(principal, input.workspace_id);
  if (!workspaceId && !isOrganisationWide(principal)) {
    throw new Forbidden(
      "Organisation-wide MCP integrations are created by organisation admins only; name a workspace_id.",
      {
        code: "admin_required",
      },
    );
  }
  const url = (await checkCustomHost(input.url, deps.services.trustedHosts, "url")).href;
  const configurations = await mergeConfigurations(secretsOf(deps), input.configurations);
  checkConfigurations(input.auth_type, configurations);
  const created = await mcpIntegrationStore(deps.records).create(principal.organisationId, {
    slug: input.slug ?? slugFrom(input.name),
    name: input.name,
    description: input.description ?? null,
    url,
    transport: input.transport,
    auth_type: input.auth_type,
    configurations,
    capabilities: [],
    server_info: { sync_status: "never" },
    workspaces: [],
    global_workspace_access: false,
    ...(workspaceId ? { workspaceId } : {}),
    ...((principal.userId ?? principal.keyId) ? { ownerId: principal.userId ?? principal.keyId } : {}),
  });
  await changed(deps, principal, { action: "create", resourceType: RESOURCE_TYPE, after: created }, presentIntegration);
  return { id: created.id, slug: created.slug, object: "mcp_integration" };
}

export interface IntegrationListInput {
  organisation_id?: string;
  workspace_id?: string;
  type?: "workspace" | "organisation" | "all";
  search?: string;
  limit: number;
  offset: number;
}

/** Newest first, with the total (read whole: an organisation holds tens of integrations, not thousands). */
export async function listIntegrations(
  deps: McpAdminDeps,
  principal: Principal,
  input: IntegrationListInput,
): Promise<CountedPage<ReturnType<typeof presentIntegration>>> {
  assertOwnOrganisation(principal, input.organisation_id);
  const workspaceId = workspaceScope(principal, input.workspace_id);
  const search = input.search?.trim().toLowerCase();
  const keep = (integration: McpIntegration) => {
    if (!integrationVisible(principal, integration)) return false;
    if (workspaceId && !integrationOpenTo(integration, workspaceId)) return false;
    if (input.type === "workspace" && !integration.workspaceId) return false;
    if (input.type === "organisation" && integration.workspaceId) return false;
    if (search && !`${integration.name}\n${integration.slug}`.toLowerCase().includes(search)) return false;
    return true;
  };
  const all = await mcpIntegrationStore(deps.records).listAll(principal.organisationId, keep);
  const page = offsetPage(all, input.offset, input.limit);
  return { ...page, items: page.items.map(presentIntegration) };
}

export async function getIntegration(deps: McpAdminDeps, principal: Principal, ref: string) {
  return presentIntegration(await loadIntegration(deps, principal, ref));
}

export async function updateIntegration(
  deps: McpAdminDeps,
  principal: Principal,
  ref: string,
  input: McpIntegrationUpdateBody,
) {
  const current = await loadWritableIntegration(deps, principal, ref);
  const changes: Partial<McpIntegration> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.description !== undefined) changes.description = input.description;
  if (input.url !== undefined) changes.url = (await checkCustomHost(input.url, deps.services.trustedHosts, "url")).href;
  if (input.transport !== undefined) changes.transport = input.transport;
  if (input.auth_type !== undefined) changes.auth_type = input.auth_type;
  if (input.configurations !== undefined)
    changes.configurations = await mergeConfigurations(secretsOf(deps), input.configurations, current.configurations);
  checkConfigurations(changes.auth_type ?? current.auth_type, changes.configurations ?? current.configurations);
  const updated = await mcpIntegrationStore(deps.records).update(current, changes);
  await changed(
    deps,
    principal,
    { action: "update", resourceType: RESOURCE_TYPE, before: current, after: updated },
    presentIntegration,
  );
  return { id: updated.id, slug: updated.slug, object: "mcp_integration" };
}

export async function deleteIntegration(deps: McpAdminDeps, principal: Principal, ref: string) {
  const integration = await loadWritableIntegration(deps, principal, ref);
  const users = await mcpServerStore(deps.records).list(principal.organisationId, {
    limit: 1,
    filter: (server) => server.mcp_integration_id === integration.id,
  });
  if (users.items.length > 0) {
    throw new Conflict("MCP servers still expose this integration; delete them first.", {
      code: "mcp_integration_in_use",
    });
  }
  await mcpIntegrationStore(deps.records).delete(integration);
  await changed(
    deps,
    principal,
    { action: "delete", resourceType: RESOURCE_TYPE, before: integration },
    presentIntegration,
  );
  return { id: integration.id, slug: integration.slug, object: "mcp_integration", deleted: true };
}

/** The answer of a sync: what is stored now, or why the upstream could not be read (the handler answers 502). */
export type SyncOutcome =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; error: string; body: Record<string, unknown> };

/**
 * With a body: stores the server info and capabilities the client read itself. Without: reads them from the
 * upstream with the stored auth. Admin switches survive either way (discovery.ts keepSwitches).
 */
export async function syncIntegration(
  deps: McpAdminDeps,
  principal: Principal,
  ref: string,
  input: McpIntegrationSyncBody,
): Promise<SyncOutcome> {
  const current = await loadWritableIntegration(deps, principal, ref);
  return storeSnapshot(deps, principal, current, input.server_info || input.capabilities ? input : undefined);
}

/** Pulls (or takes `pushed`) and stores a snapshot; shared with the servers' capability and metadata syncs. */
export async function storeSnapshot(
  deps: McpAdminDeps,
  principal: Principal,
  current: McpIntegration,
  pushed?: McpIntegrationSyncBody,
  pullAs: { server?: McpServer; userId?: string } = {},
): Promise<SyncOutcome> {
  /** Saves what the sync found, audited as a `sync`. */
  const save = async (changes: Partial<McpIntegration>) => {
    const updated = await mcpIntegrationStore(deps.records).update(current, changes);
    await changed(
      deps,
      principal,
      { action: "sync", resourceType: RESOURCE_TYPE, before: current, after: updated },
      presentIntegration,
    );
    return syncAnswer(updated);
  };
  if (pushed) {
    const snapshot = snapshotFromBody(current, pushed);
    const unique = new Map(
      snapshot.capabilities.map((capability) => [capabilityKey(capability.type, capability.name), capability]),
    );
    return { ok: true, body: await save({ server_info: snapshot.server_info, capabilities: [...unique.values()] }) };
  }
  const pulled = await pullSnapshot(deps.services, current, pullAs);
  if (!pulled.ok) {
    const body = await save({ server_info: failedInfo(current.server_info, pulled.error) });
    return { ok: false, error: pulled.error, body };
  }
  const body = await save({ server_info: pulled.snapshot.server_info, capabilities: pulled.snapshot.capabilities });
  return { ok: true, body };
}

function syncAnswer(integration: McpIntegration) {
  return {
    id: integration.id,
    slug: integration.slug,
    sync_status: integration.server_info.sync_status ?? "never",
    last_synced_at: integration.server_info.last_synced_at ?? null,
    last_sync_error: integration.server_info.last_sync_error ?? null,
    server_info: presentMetadata(integration.server_info),
    capabilities: capabilityCounts(integration.capabilities),
  };
}

/** Connects with the stored auth and reads what the upstream offers, storing nothing. */
export async function testIntegration(deps: McpAdminDeps, principal: Principal, ref: string) {
  const integration = await loadIntegration(deps, principal, ref);
  return testConnection(deps, integration);
}

export async function testConnection(
  deps: McpAdminDeps,
  integration: McpIntegration,
  pullAs: { server?: McpServer; userId?: string } = {},
) {
  const pulled = await pullSnapshot(deps.services, integration, pullAs);
  if (!pulled.ok) return { success: false, error: pulled.error };
  const { server_info, capabilities } = pulled.snapshot;
  return {
    success: true,
    server_info: {
      name: server_info.server_name ?? null,
      version: server_info.server_version ?? null,
      protocol_version: server_info.protocol_version ?? null,
    },
    capabilities: capabilityCounts(capabilities),
  };
}

// --- workspace access -------------------------------------------------------------------------------------------

function presentWorkspaces(integration: McpIntegration) {
  return {
    object: "list",
    id: integration.id,
    workspace_id: integration.workspaceId ?? null,
    global_workspace_access: { enabled: integration.workspaceId ? false : integration.global_workspace_access },
    workspaces: integration.workspaceId ? [{ id: integration.workspaceId, enabled: true }] : integration.workspaces,
    data: integration.workspaceId ? [{ id: integration.workspaceId, enabled: true }] : integration.workspaces,
  };
}

/** Organisation-level callers only: which workspaces an organisation-wide integration is open to is theirs to see. */
export async function getWorkspaces(deps: McpAdminDeps, principal: Principal, ref: string) {
  const integration = await loadIntegration(deps, principal, ref);
  if (!isOrganisationWide(principal)) {
    throw new Forbidden("Workspace access of an MCP integration is managed by organisation admins.", {
      code: "admin_required",
    });
  }
  return presentWorkspaces(integration);
}

/**
 * Entries merge into the list (same id: replaced) unless `override_existing_workspace_access` replaces it;
 * `global_workspace_access.enabled` opens the integration to every workspace without an entry of its own.
 */
export async function updateWorkspaces(
  deps: McpAdminDeps,
  principal: Principal,
  ref: string,
  input: McpWorkspacesUpdateBody,
) {
  const current = await loadIntegration(deps, principal, ref);
  if (!isOrganisationWide(principal)) {
    throw new Forbidden("Workspace access of an MCP integration is managed by organisation admins.", {
      code: "admin_required",
    });
  }
  if (current.workspaceId) {
    throw new Invalid("This MCP integration belongs to one workspace and serves only it.", {
      param: "workspaces",
      code: "workspace_integration",
    });
  }
  // Entries name workspaces of this organisation, by id or slug; stored by id.
  const named: Array<{ id: string; enabled: boolean }> = [];
  for (const [index, entry] of input.workspaces.entries()) {
    const workspace = await workspaceStore(deps.records).get(principal.organisationId, entry.id);
    if (!workspace)
      throw new Invalid(`No workspace '${entry.id}'.`, {
        param: `workspaces[${index}].id`,
        code: "workspace_not_found",
      });
    named.push({ id: workspace.id, enabled: entry.enabled });
  }
  const entries = new Map(
    input.override_existing_workspace_access ? [] : current.workspaces.map((entry) => [entry.id, entry]),
  );
  for (const entry of named) entries.set(entry.id, entry);
  const changes: Partial<McpIntegration> = { workspaces: [...entries.values()] };
  if (input.global_workspace_access) changes.global_workspace_access = input.global_workspace_access.enabled;
  const updated = await mcpIntegrationStore(deps.records).update(current, changes);
  await audit(deps, principal, {
    action: "update_workspaces",
    resourceType: RESOURCE_TYPE,
    resourceId: updated.id,
    before: presentWorkspaces(current),
    after: presentWorkspaces(updated),
  });
  return presentWorkspaces(updated);
}

// --- capabilities and metadata -----------------------------------------------------------------------------------

export async function getCapabilities(deps: McpAdminDeps, principal: Principal, ref: string) {
  const integration = await loadIntegration(deps, principal, ref);
  const data = integration.capabilities.map(presentCapability);
  return { object: "list", data, total: data.length };
}

/** Switches capabilities on or off by name and type; naming one the integration does not have is a 400. */
export async function updateCapabilities(
  deps: McpAdminDeps,
  principal: Principal,
  ref: string,
  input: CapabilitySwitchesBody,
) {
  const current = await loadWritableIntegration(deps, principal, ref);
  const switches = new Map<string, boolean>();
  input.capabilities.forEach((item, index) => {
    const key = capabilityKey(item.type, item.name);
    if (!current.capabilities.some((capability) => capabilityKey(capability.type, capability.name) === key)) {
      throw new Invalid(`The integration has no ${item.type} '${item.name}' (sync it first).`, {
        param: `capabilities[${index}].name`,
        code: "capability_not_found",
      });
    }
    switches.set(key, item.enabled);
  });
  const capabilities = current.capabilities.map((capability) => {
    const enabled = switches.get(capabilityKey(capability.type, capability.name));
    return enabled === undefined ? capability : { ...capability, enabled };
  });
  const updated = await mcpIntegrationStore(deps.records).update(current, { capabilities });
  await audit(deps, principal, {
    action: "update_capabilities",
    resourceType: RESOURCE_TYPE,
    resourceId: updated.id,
    workspaceId: updated.workspaceId,
    before: { capabilities: enabledNames(current) },
    after: { capabilities: enabledNames(updated) },
  });
  const data = updated.capabilities.map(presentCapability);
  return { object: "list", data, total: data.length };
}

const enabledNames = (integration: McpIntegration) =>
  integration.capabilities.map((capability) => ({
    name: capability.name,
    type: capability.type,
    enabled: capability.enabled,
  }));

export async function getMetadata(deps: McpAdminDeps, principal: Principal, ref: string) {
  const integration = await loadIntegration(deps, principal, ref);
  return { id: integration.id, ...presentMetadata(integration.server_info) };
}
