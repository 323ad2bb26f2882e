import type { Client } from "@modelcontextprotocol/client";
import type { Prompt, Resource, ResourceTemplateType as ResourceTemplate, Tool } from "@modelcontextprotocol/client";
import type { Services } from "../../../services.ts";
import type { McpCapability, McpCapabilityType, McpIntegration, McpServer, McpServerInfo } from "../records.ts";
import { upstreamAuthHeaders } from "../upstream/auth.ts";
import { closeUpstream, connectUpstream } from "../upstream/client.ts";

/** At most this many items of each kind are read from an upstream (a hostile server cannot page forever). */
const MAX_ITEMS_PER_KIND = 2000;

export interface UpstreamSnapshot {
  server_info: McpServerInfo;
  /** Everything the upstream offers now, each `enabled` as it was before when known, else enabled. */
  capabilities: McpCapability[];
}

/**
 * Connects to an integration's upstream and reads what it offers: server info, tools, prompts, resources and
 * resource templates (only the kinds its capabilities announce). Switches an admin set before are kept.
 */
export async function discoverUpstream(
  services: Services,
  integration: McpIntegration,
  options: { server?: McpServer; userId?: string; signal?: AbortSignal } = {},
): Promise<UpstreamSnapshot> {
  const headers = await upstreamAuthHeaders(services, integration, options);
  const client = await connectUpstream(services, integration, headers, options.signal);
  try {
    const discovered = await readCapabilities(client, options.signal);
    const version = client.getServerVersion();
    const flags = client.getServerCapabilities() ?? {};
    return {
      server_info: {
        server_name: version?.name ?? null,
        server_version: version?.version ?? null,
        title: version?.title ?? null,
        website_url: version?.websiteUrl ?? null,
        icons: version?.icons ?? null,
        protocol_version:
          client.transport && "protocolVersion" in client.transport
            ? String(client.transport.protocolVersion ?? "") || null
            : null,
        capability_flags: flags as Record<string, unknown>,
        instructions: client.getInstructions() ?? null,
        sync_status: "synced",
        last_synced_at: new Date().toISOString(),
        last_sync_error: null,
      },
      capabilities: keepSwitches(integration.capabilities, discovered),
    };
  } finally {
    await closeUpstream(client);
  }
}

async function readCapabilities(client: Client, signal?: AbortSignal): Promise<McpCapability[]> {
  const flags = client.getServerCapabilities() ?? {};
  const options = { signal, timeout: 30_000 };
  const out: McpCapability[] = [];
  if (flags.tools) {
    await pages(
      (cursor) => client.listTools({ cursor }, options),
      "tools",
      (tool: Tool) =>
        out.push({
          type: "tool",
          name: tool.name,
          enabled: true,
          title: tool.title,
          description: tool.description ?? null,
          schema: { inputSchema: tool.inputSchema, ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}) },
          ...(tool.annotations ? { annotations: tool.annotations as Record<string, unknown> } : {}),
        }),
    );
  }
  if (flags.prompts) {
    await pages(
      (cursor) => client.listPrompts({ cursor }, options),
      "prompts",
      (prompt: Prompt) =>
        out.push({
          type: "prompt",
          name: prompt.name,
          enabled: true,
          title: prompt.title,
          description: prompt.description ?? null,
          schema: { arguments: prompt.arguments ?? [] },
        }),
    );
  }
  if (flags.resources) {
    await pages(
      (cursor) => client.listResources({ cursor }, options),
      "resources",
      (resource: Resource) =>
        out.push({
          type: "resource",
          name: resource.uri,
          enabled: true,
          title: resource.title ?? resource.name,
          description: resource.description ?? null,
          schema: { uri: resource.uri, name: resource.name, mimeType: resource.mimeType ?? null },
        }),
    );
    await pages(
      (cursor) => client.listResourceTemplates({ cursor }, options),
      "resourceTemplates",
      (template: ResourceTemplate) =>
        out.push({
          type: "resource_template",
          name: template.uriTemplate,
          enabled: true,
          title: template.title ?? template.name,
          description: template.description ?? null,
          schema: { uriTemplate: template.uriTemplate, name: template.name, mimeType: template.mimeType ?? null },
        }),
    ).catch(() => {}); // Older servers without templates answer method-not-found.
  }
  return out;
}

async function pages<K extends string, T>(
  list: (cursor: string | undefined) => Promise<{ nextCursor?: string } & Record<K, T[]>>,
  key: K,
  each: (item: T) => void,
): Promise<void> {
  let cursor: string | undefined;
  let count = 0;
  do {
    const page = await list(cursor);
    for (const item of page[key]) {
      if (count++ >= MAX_ITEMS_PER_KIND) return;
      each(item);
    }
    cursor = page.nextCursor;
  } while (cursor);
}

const keyOf = (type: McpCapabilityType, name: string) => `${type}:${name}`;

/** New capabilities start enabled; ones seen before keep the admin's switch. */
export function keepSwitches(previous: McpCapability[], discovered: McpCapability[]): McpCapability[] {
  const before = new Map(previous.map((capability) => [keyOf(capability.type, capability.name), capability.enabled]));
  return discovered.map((capability) => ({
    ...capability,
    enabled: before.get(keyOf(capability.type, capability.name)) ?? true,
  }));
}
