import type { Principal } from "../../../auth/principal.ts";
import { isOrganisationWide } from "../../../auth/scopes.ts";
import type { Services } from "../../../services.ts";
import {
  type McpCapabilityType,
  type McpIntegration,
  type McpServer,
  exposedCapabilities,
  integrationOpenTo,
  mcpIntegrationStore,
  mcpServerStore,
  userMayUse,
} from "../records.ts";
import { McpToolError } from "../tool-host.ts";

/** A server the caller may use, its integration, and what it exposes (the allow-list). */
export interface McpTarget {
  server: McpServer;
  integration: McpIntegration;
  allowed: AllowList;
}

/**
 * Resolves `serverRef` (id or slug) for a caller: it must exist in the caller's organisation and, for a
 * workspace key, in the caller's workspace (else 404, as for a server that does not exist); its integration
 * must be open to that workspace and the calling user allowed (else 403).
 */
export async function resolveMcpTarget(
  services: Services,
  principal: Principal,
  serverRef: string,
): Promise<McpTarget> {
  const records = services.stores.records;
  const server = await mcpServerStore(records).get(principal.organisationId, serverRef);
  if (!server || !serverInReach(principal, server)) {
    throw new McpToolError(404, `No MCP server '${serverRef}' in this workspace.`, "mcp_server_not_found");
  }
  const integration = await mcpIntegrationStore(records).get(principal.organisationId, server.mcp_integration_id);
  if (!integration || !integrationOpenTo(integration, server.workspaceId)) {
    throw new McpToolError(403, `MCP server '${server.slug}' is not enabled in this workspace.`, "mcp_server_disabled");
  }
  if (!userMayUse(server, principal.userId)) {
    throw new McpToolError(403, `You do not have access to MCP server '${server.slug}'.`, "mcp_access_denied");
  }
  return { server, integration, allowed: allowListOf(integration, server) };
}

/**
 * Whether a server is in the caller's reach: any server of the organisation for organisation-wide callers,
 * else only those of the caller's own workspace (a caller bound to no workspace reaches none).
 */
export function serverInReach(principal: Principal, server: McpServer): boolean {
  return (
    isOrganisationWide(principal) ||
    (principal.workspaceId !== undefined && server.workspaceId === principal.workspaceId)
  );
}

/** What a server exposes, by kind. Hidden and never-synced capabilities are neither listed nor callable. */
export interface AllowList {
  tools: Set<string>;
  prompts: Set<string>;
  resources: Set<string>;
  /** URI templates (RFC 6570) whose expansions may be read. */
  templates: string[];
}

export function allowListOf(integration: McpIntegration, server: McpServer): AllowList {
  const names = (type: McpCapabilityType) => exposedCapabilities(integration, server, type).map((c) => c.name);
  return {
    tools: new Set(names("tool")),
    prompts: new Set(names("prompt")),
    resources: new Set(names("resource")),
    templates: names("resource_template"),
  };
}

/**
 * Whether a resource URI may be read: an enabled resource, or an expansion of an enabled template (RFC 6570, as
 * the MCP SDK matches them). The one rule for the endpoint and for server-side mode alike.
 */
export async function resourceMatcher(allowed: AllowList): Promise<(uri: string) => boolean> {
  const { UriTemplate } = await import("@modelcontextprotocol/server");
  const templates = allowed.templates.map((template) => new UriTemplate(template));
  return (uri) => allowed.resources.has(uri) || templates.some((template) => template.match(uri) !== null);
}
