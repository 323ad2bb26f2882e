import { openValue } from "../../../control/sealed-values.ts";
import type { Services } from "../../../services.ts";
import { type UpstreamSnapshot, discoverUpstream, keepSwitches } from "./discovery.ts";
import { sealedValuesOf } from "./configurations.ts";
import type { McpIntegrationSyncBody, SyncCapabilityBody } from "./schemas.ts";
import type { McpCapability, McpIntegration, McpServer, McpServerInfo } from "../records.ts";

/**
 * Reading an integration's capabilities: pulled from the upstream (discovery.ts), or pushed by a client that
 * read them itself (`POST /mcp-integrations/:id/sync` with a body, the SDK's shape). A failed pull gives a reason
 * fit to store and show: secrets scrubbed out, whatever the upstream echoed back.
 */

export type PullResult = { ok: true; snapshot: UpstreamSnapshot } | { ok: false; error: string };

const MAX_ERROR_LENGTH = 500;

export async function pullSnapshot(
  services: Services,
  integration: McpIntegration,
  options: { server?: McpServer; userId?: string } = {},
): Promise<PullResult> {
  try {
    const snapshot = await discoverUpstream(services, integration, { ...options, signal: AbortSignal.timeout(30_000) });
    return { ok: true, snapshot };
  } catch (error) {
    return { ok: false, error: await scrubbed(services, integration, reasonOf(error)) };
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === "TimeoutError" || error.name === "AbortError") return "The MCP server did not answer in time.";
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause instanceof Error && !error.message.includes(cause.message) ? ` (${cause.message})` : "";
    return `${error.message}${detail}`;
  }
  return "The MCP server could not be reached.";
}

/** The reason without any stored secret or credential-looking token, and bounded in length. */
async function scrubbed(services: Services, integration: McpIntegration, reason: string): Promise<string> {
  let text = reason;
  for (const sealed of sealedValuesOf(integration.configurations)) {
    const value = await openValue(services.stores.secrets, sealed).catch(() => undefined);
    if (typeof value === "string" && value.length >= 4) text = text.split(value).join("[redacted]");
  }
  text = text.replace(/\b(bearer|basic)\s+[^\s"',}]+/gi, "$1 [redacted]");
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}...` : text;
}

/** What a failed pull leaves on the integration: the previous capabilities, and why the pull failed. */
export const failedInfo = (previous: McpServerInfo, error: string): McpServerInfo => ({
  ...previous,
  sync_status: "failed",
  last_synced_at: new Date().toISOString(),
  last_sync_error: error,
});

/** A snapshot from a `POST /sync` body: camelCase (MCP's own) and snake_case keys alike. */
export function snapshotFromBody(integration: McpIntegration, body: McpIntegrationSyncBody): UpstreamSnapshot {
  const info = body.server_info;
  const server_info: McpServerInfo = {
    ...integration.server_info,
    ...(info
      ? {
          server_name: info.name ?? null,
          server_version: info.version ?? null,
          title: info.title ?? null,
          description: info.description ?? null,
          website_url: info.website_url ?? info.websiteUrl ?? null,
          icons: info.icons ?? null,
          protocol_version: info.protocol_version ?? info.protocolVersion ?? null,
          capability_flags: info.capabilities ?? null,
          instructions: info.instructions ?? null,
        }
      : {}),
    sync_status: "synced",
    last_synced_at: new Date().toISOString(),
    last_sync_error: null,
  };
  const capabilities = body.capabilities
    ? keepSwitches(integration.capabilities, body.capabilities.flatMap(capabilityFromBody))
    : integration.capabilities;
  return { server_info, capabilities };
}

function capabilityFromBody(item: SyncCapabilityBody): McpCapability[] {
  const uri = item.uri;
  const uriTemplate = item.uri_template ?? item.uriTemplate;
  const type = item.type ?? (uriTemplate ? "resource_template" : uri ? "resource" : "tool");
  const name =
    type === "resource" ? (uri ?? item.name) : type === "resource_template" ? (uriTemplate ?? item.name) : item.name;
  if (!name) return [];
  const mimeType = item.mime_type ?? item.mimeType ?? null;
  const inputSchema = item.input_schema ?? item.inputSchema;
  const outputSchema = item.output_schema ?? item.outputSchema;
  const schema =
    type === "tool"
      ? { inputSchema: inputSchema ?? { type: "object" }, ...(outputSchema ? { outputSchema } : {}) }
      : type === "prompt"
        ? { arguments: item.arguments ?? [] }
        : type === "resource"
          ? { uri: name, name: item.name ?? name, mimeType }
          : { uriTemplate: name, name: item.name ?? name, mimeType };
  return [
    {
      name,
      type,
      enabled: true,
      ...(item.title ? { title: item.title } : {}),
      description: item.description ?? null,
      schema,
      ...(item.annotations ? { annotations: item.annotations } : {}),
    },
  ];
}

/** Counts per kind, for `POST /test`. */
export function capabilityCounts(capabilities: McpCapability[]) {
  const count = (type: McpCapability["type"]) => capabilities.filter((capability) => capability.type === type).length;
  return {
    tools: count("tool"),
    prompts: count("prompt"),
    resources: count("resource"),
    resource_templates: count("resource_template"),
  };
}
