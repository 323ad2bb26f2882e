import * as z from "zod";
import { slugSchema } from "../../../control/credentials/schemas.ts";

/**
 * Bodies of `/v1/mcp-integrations` (the `portkey-ai` SDK's MCPIntegrations*Params). Secrets (header values,
 * `client_secret`) arrive in plaintext once and are sealed by the service; a masked hint sent back keeps the
 * stored value.
 */

const name = z.string().trim().min(1).max(256);
const description = z.string().max(4096).nullable();
const authType = z.enum(["oauth_auto", "oauth_client_credentials", "headers", "none"]);
const transport = z.enum(["http", "sse"]);
const url = z.string().trim().min(1).max(2048);

/** Header names the gateway sets itself, or that would change how the request is framed. */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "upgrade",
  "te",
  "trailer",
  "keep-alive",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
]);

const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/, "a header name is 1 to 128 token characters")
  .refine((value) => !RESERVED_HEADERS.has(value.toLowerCase()), "the gateway sets this header itself");
const headerValue = z
  .string()
  .min(1)
  .max(8192)
  .regex(/^[^\r\n\0]*$/, "a header value may not hold line breaks or NUL");

/** `null` removes a field on update. */
export const configurationsSchema = z.strictObject({
  headers: z
    .record(headerName, headerValue)
    .refine((headers) => Object.keys(headers).length <= 32, "at most 32 headers")
    .nullable()
    .optional(),
  client_id: z.string().trim().min(1).max(512).nullable().optional(),
  client_secret: z.string().min(1).max(4096).nullable().optional(),
  token_url: url.nullable().optional(),
  scope: z.string().trim().max(1024).nullable().optional(),
});
export type ConfigurationsBody = z.output<typeof configurationsSchema>;

export const mcpIntegrationCreateSchema = z.strictObject({
  name,
  url,
  auth_type: authType,
  transport: transport.default("http"),
  workspace_id: z.string().min(1).max(200).optional(),
  organisation_id: z.string().min(1).max(200).optional(),
  slug: slugSchema.optional(),
  description: description.optional(),
  configurations: configurationsSchema.optional(),
});
export type McpIntegrationCreateBody = z.output<typeof mcpIntegrationCreateSchema>;

export const mcpIntegrationUpdateSchema = z.strictObject({
  name: name.optional(),
  description: description.optional(),
  url: url.optional(),
  auth_type: authType.optional(),
  transport: transport.optional(),
  configurations: configurationsSchema.optional(),
});
export type McpIntegrationUpdateBody = z.output<typeof mcpIntegrationUpdateSchema>;

export const mcpIntegrationListQuery = z.looseObject({
  organisation_id: z.string().min(1).max(200).optional(),
  workspace_id: z.string().min(1).max(200).optional(),
  type: z.enum(["workspace", "organisation", "all"]).optional(),
  page_size: z.coerce.number().int().min(1).max(1000).optional(),
  current_page: z.coerce.number().int().min(0).max(1_000_000).optional(),
  search: z.string().max(256).optional(),
});

const capabilityType = z.enum(["tool", "prompt", "resource", "resource_template"]);
const schemaObject = z.record(z.string(), z.unknown());

/** One capability as the SDK sends it to `POST /sync`: MCP's own camelCase keys or their snake_case twins. */
const syncCapability = z.looseObject({
  name: z.string().min(1).max(1024).optional(),
  type: capabilityType.optional(),
  title: z.string().max(1024).optional(),
  description: z.string().max(65_536).nullable().optional(),
  icons: z.array(z.unknown()).max(64).optional(),
  input_schema: schemaObject.optional(),
  inputSchema: schemaObject.optional(),
  output_schema: schemaObject.optional(),
  outputSchema: schemaObject.optional(),
  annotations: schemaObject.optional(),
  arguments: z.array(z.unknown()).max(256).optional(),
  uri: z.string().max(4096).optional(),
  mime_type: z.string().max(256).optional(),
  mimeType: z.string().max(256).optional(),
  uri_template: z.string().max(4096).optional(),
  uriTemplate: z.string().max(4096).optional(),
});
export type SyncCapabilityBody = z.output<typeof syncCapability>;

const optionalText = (max: number) => z.string().max(max).nullable().optional();

export const mcpIntegrationSyncSchema = z.strictObject({
  server_info: z
    .looseObject({
      name: optionalText(512),
      version: optionalText(256),
      title: optionalText(1024),
      description: optionalText(65_536),
      website_url: optionalText(2048),
      websiteUrl: optionalText(2048),
      icons: z.array(z.unknown()).max(64).nullable().optional(),
      protocol_version: optionalText(64),
      protocolVersion: optionalText(64),
      capabilities: schemaObject.nullable().optional(),
      instructions: optionalText(65_536),
    })
    .optional(),
  capabilities: z.array(syncCapability).max(2000).optional(),
});
export type McpIntegrationSyncBody = z.output<typeof mcpIntegrationSyncSchema>;

export const mcpWorkspacesUpdateSchema = z.strictObject({
  workspaces: z.array(z.strictObject({ id: z.string().min(1).max(200), enabled: z.boolean() })).max(1000),
  global_workspace_access: z.strictObject({ enabled: z.boolean() }).nullable().optional(),
  override_existing_workspace_access: z.boolean().optional(),
});
export type McpWorkspacesUpdateBody = z.output<typeof mcpWorkspacesUpdateSchema>;

export const capabilitySwitchesSchema = z.strictObject({
  capabilities: z
    .array(z.strictObject({ name: z.string().min(1).max(4096), type: capabilityType, enabled: z.boolean() }))
    .max(2000),
});
export type CapabilitySwitchesBody = z.output<typeof capabilitySwitchesSchema>;
