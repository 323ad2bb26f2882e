import * as z from "zod";
import { exportFieldListSchema } from "../../observe/exports/export-field-list.ts";

/**
 * Request bodies of the organisation admin API (core/routes/handlers/organisation.ts). Kept apart from the
 * record access in organisation.ts, which the data plane imports: zod schemas are built at import.
 */

/** `weekly` -> 7, `monthly` -> 30, integers 1..365 as they are; `null` clears the setting. */
export const rotationPeriodSchema = z.union([
  z.literal("weekly").transform(() => 7),
  z.literal("monthly").transform(() => 30),
  z.number().int().min(1).max(365),
  z.null(),
]);

export const settingsUpdateSchema = z.strictObject({
  user_api_key_rotation_period: rotationPeriodSchema.optional(),
  user_api_key_auto_create: z.boolean().optional(),
  default_workspace_user_api_key_auto_create: z.boolean().optional(),
  /** `null` returns to the default (the date rule). */
  block_inline_config: z.boolean().nullable().optional(),
  /** Log export fields no export of the organisation may ask for (spec 7); workspaces may override. */
  log_export_denied_fields: exportFieldListSchema.optional(),
});

/** Guardrail ids or slugs: letters, digits, `_`, `-`, `.`; 1..128 characters. Objects `{id}` / `{slug}` too. */
const guardrailRefInput = z.union([
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, "expected a guardrail id or slug"),
  z.strictObject({ id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/) }),
  z.strictObject({ slug: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/) }),
]);

export type GuardrailRefInput = z.infer<typeof guardrailRefInput>;

export const defaultsUpdateSchema = z.strictObject({
  input_guardrails: z.array(guardrailRefInput).max(50).optional(),
  output_guardrails: z.array(guardrailRefInput).max(50).optional(),
});

export const exclusionsUpdateSchema = z
  .strictObject({
    workspace_ids: z.array(z.string().min(1).max(200)).max(1000).optional(),
    /** Alias accepted for clients that send `workspaces`. */
    workspaces: z.array(z.string().min(1).max(200)).max(1000).optional(),
    override_existing: z.boolean().default(false),
  })
  .refine((body) => body.workspace_ids !== undefined || body.workspaces !== undefined, {
    message: "'workspace_ids' is required",
    path: ["workspace_ids"],
  });

export type SettingsUpdateInput = z.infer<typeof settingsUpdateSchema>;
export type DefaultsUpdateInput = z.infer<typeof defaultsUpdateSchema>;
export type ExclusionsUpdateInput = z.infer<typeof exclusionsUpdateSchema>;
