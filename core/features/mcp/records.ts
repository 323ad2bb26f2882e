import type { SealedValue } from "../../control/sealed-values.ts";
import { type Resource, ResourceStore } from "../../control/resource-store.ts";
import type { Records } from "../../store/ports.ts";

/**
 * The MCP gateway's records (issue 27), organisation-owned through core/control/resource-store.ts. This file is
 * the contract the MCP admin API, the MCP endpoint, the OAuth server and server-side MCP tools share.
 *
 * - An MCP integration (MCPINT, `mcpi_...`) is an upstream MCP server: URL, transport, how the gateway
 *   authenticates to it (secrets sealed), the capabilities last synced from it (each enabled or not), and which
 *   workspaces may expose it. Organisation-wide (`workspaceId` unset) or owned by one workspace.
 * - An MCP server (MCPSRV, `mcps_...`) exposes an integration in one workspace, under its own slug; its own
 *   capability switches can only narrow the integration's, and its user access says who may call it.
 * - A connection (MCPCONN) holds one user's OAuth tokens to the upstream of one server (`oauth_auto`), sealed;
 *   pk `MCPCONN#<serverId>`, sk `USER#<userId>` (workspace-wide tokens set by `PUT /mcp-servers/:id/tokens`
 *   without a user use sk `WORKSPACE`).
 */

export type McpAuthType = "oauth_auto" | "oauth_client_credentials" | "headers" | "none";
export type McpTransport = "http" | "sse";
export type McpCapabilityType = "tool" | "prompt" | "resource" | "resource_template";

export interface McpCapability {
  name: string;
  type: McpCapabilityType;
  enabled: boolean;
  title?: string;
  description?: string | null;
  /** A tool's input schema, a prompt's arguments, a resource's uri / mimeType: as the upstream declared them. */
  schema?: Record<string, unknown> | null;
  annotations?: Record<string, unknown>;
}

export interface McpServerInfo {
  server_name?: string | null;
  server_version?: string | null;
  protocol_version?: string | null;
  title?: string | null;
  description?: string | null;
  website_url?: string | null;
  icons?: unknown[] | null;
  capability_flags?: Record<string, unknown> | null;
  instructions?: string | null;
  sync_status?: "never" | "synced" | "failed";
  last_synced_at?: string | null;
  last_sync_error?: string | null;
}

/**
 * How the gateway authenticates to the upstream. Secret values are sealed (core/control/sealed-values.ts):
 * - `headers`: `headers` name -> value, every value sealed;
 * - `oauth_client_credentials`: `client_id`, sealed `client_secret`, optional `token_url` (else discovered from
 *   the upstream's authorization-server metadata), `scope`;
 * - `oauth_auto`: per-user tokens in connections; optional pre-registered `client_id` / sealed `client_secret`,
 *   else the gateway registers itself dynamically with the upstream;
 * - `none`.
 */
export interface McpIntegrationConfigurations {
  headers?: Record<string, SealedValue>;
  client_id?: string;
  client_secret?: SealedValue;
  token_url?: string;
  scope?: string;
  [field: string]: unknown;
}

export interface McpIntegration extends Resource {
  slug: string;
  name: string;
  description?: string | null;
  url: string;
  transport: McpTransport;
  auth_type: McpAuthType;
  configurations: McpIntegrationConfigurations;
  capabilities: McpCapability[];
  server_info: McpServerInfo;
  /** Workspaces that may expose this (organisation-wide) integration; ignored for a workspace-owned one. */
  workspaces: Array<{ id: string; enabled: boolean }>;
  global_workspace_access: boolean;
  ownerId?: string;
}

export interface McpServer extends Resource {
  slug: string;
  workspaceId: string;
  name: string;
  description?: string | null;
  mcp_integration_id: string;
  /** Switches that narrow the integration's capabilities: `<type>:<name>` -> enabled. Absent = as integration. */
  capability_overrides: Record<string, boolean>;
  default_user_access: "allow" | "deny";
  user_access: Array<{ user_id: string; enabled: boolean }>;
  /** Metadata set for this server (`POST /mcp-servers/:id/metadata/sync` with a body), over the integration's. */
  metadata?: McpServerInfo;
  ownerId?: string;
}

export interface McpConnection {
  serverId: string;
  organisationId: string;
  workspaceId: string;
  /** Unset for a workspace-wide token. */
  userId?: string;
  access_token: SealedValue;
  refresh_token?: SealedValue;
  expires_at?: number;
  scope?: string;
  /** The client the gateway registered with the upstream's authorization server (oauth_auto). */
  client?: { client_id: string; client_secret?: SealedValue; token_url: string };
  createdAt: number;
  updatedAt: number;
}

export const mcpIntegrationStore = (records: Records) => new ResourceStore<McpIntegration>(records, "MCPINT", "mcpi");
export const mcpServerStore = (records: Records) => new ResourceStore<McpServer>(records, "MCPSRV", "mcps");

export const connectionKey = (serverId: string, userId?: string) => ({
  pk: `MCPCONN#${serverId}`,
  sk: userId ? `USER#${userId}` : "WORKSPACE",
});

/** The key of a capability in `capability_overrides`. */
export const capabilityKey = (type: McpCapabilityType, name: string) => `${type}:${name}`;

/** Whether a server exposes a capability: enabled on the integration and not switched off on the server. */
export function capabilityEnabled(server: McpServer, capability: McpCapability): boolean {
  if (!capability.enabled) return false;
  return server.capability_overrides[capabilityKey(capability.type, capability.name)] !== false;
}

/** The capabilities a server exposes, of one type. Hidden ones are neither listed nor callable. */
export const exposedCapabilities = (integration: McpIntegration, server: McpServer, type: McpCapabilityType) =>
  integration.capabilities.filter((capability) => capability.type === type && capabilityEnabled(server, capability));

/** Whether a user may use a server (its explicit entry wins, else the server's default). */
export function userMayUse(server: McpServer, userId: string | undefined): boolean {
  const entry = userId ? server.user_access.find((access) => access.user_id === userId) : undefined;
  if (entry) return entry.enabled;
  return server.default_user_access === "allow";
}

/** Whether an integration may be exposed in a workspace. */
export function integrationOpenTo(integration: McpIntegration, workspaceId: string): boolean {
  if (integration.workspaceId) return integration.workspaceId === workspaceId;
  const entry = integration.workspaces.find((workspace) => workspace.id === workspaceId);
  if (entry) return entry.enabled;
  return integration.global_workspace_access;
}
