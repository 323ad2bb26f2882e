import type { Principal } from "../../../auth/principal.ts";
import type { Services } from "../../../services.ts";
import { serverInReach } from "./access.ts";
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

/** The `_meta` key of the gateway's own details of a listed server. */
export const GATEWAY_META_KEY = "ai-gateway/mcp-server";
const OFFICIAL_META_KEY = "io.modelcontextprotocol.registry/official";

/**
 * `GET /v0.1/servers` (spec 4.8): the MCP servers the caller may use, in the MCP registry API's list shape
 * (`servers[]` of `{server, _meta}`, `metadata.nextCursor` / `count`; `cursor` and `limit` parameters). Each
 * server's one remote is its gateway endpoint (streamable HTTP); its enabled capabilities are in `_meta`.
 * A page may come back shorter than `limit` when servers of closed integrations were left out of it.
 */
export async function listRegistryServers(
  services: Services,
  principal: Principal,
  query: { limit: number; cursor?: string; search?: string },
  baseUrl: string,
) {
  const records = services.stores.records;
  const search = query.search?.toLowerCase();
  const page = await mcpServerStore(records).list(principal.organisationId, {
    limit: query.limit,
    cursor: query.cursor,
    filter: (server) =>
      serverInReach(principal, server) &&
      userMayUse(server, principal.userId) &&
      (!search || server.slug.toLowerCase().includes(search) || server.name.toLowerCase().includes(search)),
  });
  const integrations = new Map<string, Promise<McpIntegration | undefined>>();
  const integrationOf = (id: string) => {
    let found = integrations.get(id);
    if (!found) {
      found = mcpIntegrationStore(records).get(principal.organisationId, id);
      integrations.set(id, found);
    }
    return found;
  };
  const servers = [];
  for (const server of page.items) {
    const integration = await integrationOf(server.mcp_integration_id);
    if (!integration || !integrationOpenTo(integration, server.workspaceId)) continue;
    servers.push(registryEntry(server, integration, baseUrl));
  }
  return { servers, metadata: { count: servers.length, ...(page.cursor ? { nextCursor: page.cursor } : {}) } };
}

function registryEntry(server: McpServer, integration: McpIntegration, baseUrl: string) {
  const listed = (type: McpCapabilityType) =>
    exposedCapabilities(integration, server, type).map((capability) => ({
      name: capability.name,
      ...(capability.title ? { title: capability.title } : {}),
      ...(capability.description ? { description: capability.description } : {}),
    }));
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
  return {
    server: {
      $schema: "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json",
      name: `ai-gateway/${server.slug}`,
      title: server.name,
      description: (server.description ?? integration.description ?? server.name).slice(0, 100),
      version: integration.server_info.server_version || "1.0.0",
      ...(integration.server_info.website_url ? { websiteUrl: integration.server_info.website_url } : {}),
      remotes: [{ type: "streamable-http", url: `${baseUrl}/mcp/${server.slug}` }],
    },
    _meta: {
      [OFFICIAL_META_KEY]: {
        status: "active",
        publishedAt: iso(server.createdAt),
        updatedAt: iso(Math.max(server.updatedAt, integration.updatedAt)),
        isLatest: true,
      },
      [GATEWAY_META_KEY]: {
        id: server.id,
        slug: server.slug,
        workspace_id: server.workspaceId,
        mcp_integration_id: integration.id,
        auth_type: integration.auth_type,
        capabilities: {
          tools: listed("tool"),
          prompts: listed("prompt"),
          resources: listed("resource"),
          resource_templates: listed("resource_template"),
        },
      },
    },
  };
}
