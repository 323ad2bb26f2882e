import * as z from "zod";
import { slugSchema } from "../../../control/credentials/schemas.ts";

/** Bodies and queries of `/v1/mcp-servers` (the `portkey-ai` SDK's MCPServers*Params). */

const description = z.string().max(4096).nullable();
const capabilityType = z.enum(["tool", "prompt", "resource", "resource_template"]);
const optionalText = (max: number) => z.string().max(max).nullable().optional();

export const mcpServerCreateSchema = z.strictObject({
  name: z.string().trim().min(1).max(256),
  mcp_integration_id: z.string().trim().min(1).max(256),
  workspace_id: z.string().min(1).max(200).optional(),
  description: description.optional(),
  slug: slugSchema.optional(),
});
export type McpServerCreateBody = z.output<typeof mcpServerCreateSchema>;

export const mcpServerUpdateSchema = z.strictObject({
  name: z.string().trim().min(1).max(256).optional(),
  description: description.optional(),
});
export type McpServerUpdateBody = z.output<typeof mcpServerUpdateSchema>;

export const mcpServerListQuery = z.looseObject({
  workspace_id: z.string().min(1).max(200).optional(),
  id: z.string().min(1).max(256).optional(),
  page_size: z.coerce.number().int().min(1).max(1000).optional(),
  current_page: z.coerce.number().int().min(0).max(1_000_000).optional(),
  search: z.string().max(256).optional(),
});

/** `enabled: true` only undoes a server's own switch: it cannot enable what the integration disabled. */
export const serverCapabilitiesSchema = z.strictObject({
  capabilities: z
    .array(z.strictObject({ name: z.string().min(1).max(4096), type: capabilityType, enabled: z.boolean() }))
    .max(2000),
});

/**
 * `POST /:id/capabilities/sync`: the SDK sends the capabilities it saw, but a server's capabilities come from its
 * integration's upstream: the gateway reads them fresh from there, and the list sent is only checked for shape.
 */
export const serverCapabilitiesSyncSchema = z.strictObject({
  capabilities: z
    .array(
      z.looseObject({
        name: z.string().max(4096),
        type: capabilityType,
        description: z.string().max(65_536).nullable().optional(),
        schema: z.record(z.string(), z.unknown()).nullable().optional(),
      }),
    )
    .max(2000)
    .optional(),
});

export const userAccessUpdateSchema = z
  .strictObject({
    user_access: z
      .array(
        z.strictObject({
          id: z.string().min(1).max(200).optional(),
          user_id: z.string().min(1).max(200).optional(),
          enabled: z.boolean(),
        }),
      )
      .max(1000)
      .optional(),
    default_user_access: z.enum(["allow", "deny"]).optional(),
  })
  .superRefine((body, context) => {
    body.user_access?.forEach((entry, index) => {
      if (!entry.id && !entry.user_id)
        context.addIssue({ code: "custom", path: ["user_access", index, "user_id"], message: "user_id is required" });
    });
  });
export type UserAccessUpdateBody = z.output<typeof userAccessUpdateSchema>;

/** `POST /:id/metadata/sync` with fields: this server's own metadata, shown over the integration's. */
export const serverMetadataSchema = z.strictObject({
  server_name: optionalText(512),
  server_version: optionalText(256),
  protocol_version: optionalText(64),
  title: optionalText(1024),
  description: optionalText(65_536),
  website_url: optionalText(2048),
  icons: z.array(z.unknown()).max(64).nullable().optional(),
  capability_flags: z.record(z.string(), z.unknown()).nullable().optional(),
  instructions: optionalText(65_536),
});
export type ServerMetadataBody = z.output<typeof serverMetadataSchema>;

export const tokensSetSchema = z.strictObject({
  access_token: z.string().min(1).max(16_384),
  refresh_token: z.string().min(1).max(16_384).optional(),
  /** Seconds from now, as an OAuth token answer gives it; or `expires_at` in Unix seconds. */
  expires_in: z
    .number()
    .int()
    .min(1)
    .max(10 * 365 * 86_400)
    .optional(),
  expires_at: z.number().int().min(0).max(99_999_999_999).optional(),
  scope: z.string().max(1024).optional(),
});
export type TokensSetBody = z.output<typeof tokensSetSchema>;

export const connectionsQuery = z.looseObject({
  user_id: z.string().min(1).max(200).optional(),
  workspace_id: z.string().min(1).max(200).optional(),
  page_size: z.coerce.number().int().min(1).max(1000).optional(),
  current_page: z.coerce.number().int().min(0).max(1_000_000).optional(),
});
