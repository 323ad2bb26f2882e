import { presentConfigurations } from "./integrations/configurations.ts";
import {
  type McpCapability,
  type McpIntegration,
  type McpServer,
  type McpServerInfo,
  capabilityEnabled,
} from "./records.ts";

/** What the admin API answers for MCP integrations and servers: the SDK's MCPIntegrationData / MCPServerData. */

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

export function presentIntegration(integration: McpIntegration) {
  return {
    object: "mcp_integration" as const,
    id: integration.id,
    slug: integration.slug,
    name: integration.name,
    description: integration.description ?? null,
    url: integration.url,
    auth_type: integration.auth_type,
    transport: integration.transport,
    configurations: presentConfigurations(integration.configurations),
    workspace_id: integration.workspaceId ?? null,
    organisation_id: integration.organisationId,
    owner_id: integration.ownerId ?? null,
    global_workspace_access: integration.workspaceId ? null : integration.global_workspace_access,
    capability_count: integration.capabilities.length,
    sync_status: integration.server_info.sync_status ?? "never",
    last_synced_at: integration.server_info.last_synced_at ?? null,
    created_at: iso(integration.createdAt),
    updated_at: iso(integration.updatedAt),
  };
}

export function presentCapability(capability: McpCapability) {
  return {
    name: capability.name,
    type: capability.type,
    enabled: capability.enabled,
    title: capability.title ?? null,
    description: capability.description ?? null,
    schema: capability.schema ?? null,
    ...(capability.annotations ? { annotations: capability.annotations } : {}),
  };
}

/** A server's view of its integration's capability: enabled only where both allow it. */
export function presentServerCapability(server: McpServer, capability: McpCapability) {
  return {
    ...presentCapability(capability),
    enabled: capabilityEnabled(server, capability),
    integration_enabled: capability.enabled,
  };
}

export function presentMetadata(info: McpServerInfo) {
  return {
    server_name: info.server_name ?? null,
    server_version: info.server_version ?? null,
    protocol_version: info.protocol_version ?? null,
    title: info.title ?? null,
    description: info.description ?? null,
    website_url: info.website_url ?? null,
    icons: info.icons ?? null,
    capability_flags: info.capability_flags ?? null,
    instructions: info.instructions ?? null,
    sync_status: info.sync_status ?? "never",
    last_synced_at: info.last_synced_at ?? null,
    last_sync_error: info.last_sync_error ?? null,
  };
}

/** A server's metadata: its integration's, with what was set on the server itself on top. */
export const serverMetadata = (server: McpServer, integration?: McpIntegration) =>
  presentMetadata({ ...(integration?.server_info ?? {}), ...definedOnly(server.metadata ?? {}) });

function definedOnly(info: McpServerInfo): McpServerInfo {
  return Object.fromEntries(Object.entries(info).filter(([, value]) => value !== undefined && value !== null));
}

/** The MCP endpoint clients use for a server. */
export const serverUrl = (publicUrl: string, server: Pick<McpServer, "slug">) =>
  `${publicUrl.replace(/\/+$/, "")}/mcp/${encodeURIComponent(server.slug)}`;

export function presentServer(server: McpServer, publicUrl: string, integration?: McpIntegration) {
  return {
    object: "mcp_server" as const,
    id: server.id,
    slug: server.slug,
    name: server.name,
    description: server.description ?? null,
    workspace_id: server.workspaceId,
    organisation_id: server.organisationId,
    mcp_integration_id: server.mcp_integration_id,
    owner_id: server.ownerId ?? null,
    url: serverUrl(publicUrl, server),
    default_user_access: server.default_user_access,
    metadata: serverMetadata(server, integration),
    created_at: iso(server.createdAt),
    updated_at: iso(server.updatedAt),
  };
}

/** What audit entries keep of a server (no URL: it depends on the request). */
export function auditServer(server: McpServer) {
  const { metadata, ...rest } = presentServer(server, "");
  return {
    ...rest,
    url: undefined,
    capability_overrides: server.capability_overrides,
    user_access: server.user_access,
  };
}
