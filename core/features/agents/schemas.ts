import * as z from "zod";
import { TRANSPORT_HEADERS, headerNameSchema, slugSchema } from "../../control/credentials/schemas.ts";

/** Request bodies of the agent integration routes (core/routes/handlers/agents.ts). */

/** Headers the transport owns, or that would let a stored value pose as something else. */
const FORBIDDEN_HEADERS = new Set([...TRANSPORT_HEADERS, "content-type", "a2a-version"]);

export const upstreamHeadersSchema = z
  .record(
    headerNameSchema(FORBIDDEN_HEADERS),
    z
      .string()
      .min(1)
      .max(8192)
      .refine((value) => !/[\r\n\0]/.test(value), "header values cannot contain line breaks"),
  )
  .refine((headers) => Object.keys(headers).length <= 20, "at most 20 headers");

const urlSchema = z.string().trim().min(1).max(2048);
const workspacesSchema = z
  .array(z.looseObject({ id: z.string().min(1).max(128), enabled: z.boolean().default(true) }))
  .max(1000);

export const agentIntegrationCreateSchema = z.strictObject({
  name: z.string().trim().min(1).max(255),
  slug: slugSchema.optional(),
  description: z.string().max(2000).nullable().optional(),
  url: urlSchema,
  workspace_id: z.string().min(1).optional(),
  auth_type: z.enum(["none", "headers"]).default("none"),
  headers: upstreamHeadersSchema.optional(),
  workspaces: workspacesSchema.optional(),
  global_workspace_access: z.boolean().optional(),
});

export const agentIntegrationUpdateSchema = z.strictObject({
  name: z.string().trim().min(1).max(255).optional(),
  slug: slugSchema.optional(),
  description: z.string().max(2000).nullable().optional(),
  url: urlSchema.optional(),
  auth_type: z.enum(["none", "headers"]).optional(),
  headers: upstreamHeadersSchema.optional(),
  workspaces: workspacesSchema.optional(),
  global_workspace_access: z.boolean().optional(),
  /** Fetch the card again from the stored URL. */
  refresh_card: z.boolean().optional(),
});

export const fetchAgentCardSchema = z.strictObject({
  url: urlSchema,
  headers: upstreamHeadersSchema.optional(),
});

export type AgentIntegrationCreateInput = z.infer<typeof agentIntegrationCreateSchema>;
export type AgentIntegrationUpdateInput = z.infer<typeof agentIntegrationUpdateSchema>;
export type FetchAgentCardInput = z.infer<typeof fetchAgentCardSchema>;
