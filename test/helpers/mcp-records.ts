import { sealValue } from "../../core/control/sealed-values.ts";
import { discoverUpstream } from "../../core/features/mcp/integrations/discovery.ts";
import {
  type McpIntegration,
  type McpServer,
  mcpIntegrationStore,
  mcpServerStore,
} from "../../core/features/mcp/records.ts";
import type { TestGateway } from "./gateway.ts";

/**
 * MCP integration and server records seeded straight into a test gateway's store (until the admin API's own
 * helpers exist): the integration's capabilities are synced from the real upstream, then `disabled` switched off.
 */
export async function seedMcpServer(
  gateway: TestGateway,
  options: {
    url: string;
    workspaceId: string;
    headers?: Record<string, string>;
    disabled?: string[];
    server?: Partial<McpServer>;
  },
): Promise<{ integration: McpIntegration; server: McpServer }> {
  const services = gateway.gateway.services;
  const organisationId = gateway.gateway.bootstrap.organisationId;
  const suffix = Math.random().toString(36).slice(2, 8);
  const headers: McpIntegration["configurations"]["headers"] = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    headers[name] = await sealValue(services.stores.secrets, value);
  }
  const fields = {
    slug: `upstream-${suffix}`,
    name: "Upstream",
    description: "A test MCP server",
    url: options.url,
    transport: "http" as const,
    auth_type: options.headers ? ("headers" as const) : ("none" as const),
    configurations: options.headers ? { headers } : {},
    capabilities: [],
    server_info: {},
    workspaces: [],
    global_workspace_access: true,
  };
  const draft = { ...fields, id: "mcpi_draft", organisationId, version: 1, createdAt: 0, updatedAt: 0 };
  const snapshot = await discoverUpstream(services, draft as McpIntegration);
  const disabled = new Set(options.disabled ?? []);
  const integration = await mcpIntegrationStore(services.stores.records).create(organisationId, {
    ...fields,
    server_info: snapshot.server_info,
    capabilities: snapshot.capabilities.map((capability) => ({
      ...capability,
      enabled: !disabled.has(capability.name),
    })),
  });
  const server = await mcpServerStore(services.stores.records).create(organisationId, {
    slug: `server-${suffix}`,
    workspaceId: options.workspaceId,
    name: "Test server",
    description: null,
    mcp_integration_id: integration.id,
    capability_overrides: {},
    default_user_access: "allow",
    user_access: [],
    ...options.server,
  });
  return { integration, server };
}
