import * as z from "zod";
import { exportFieldListSchema } from "../../observe/exports/export-field-list.ts";
import { workspaceRoleSchema } from "../users/schemas.ts";

/**
 * Request bodies of the workspaces admin API (core/routes/handlers/workspaces.ts). Kept apart from the record
 * access in workspaces.ts, which the data plane imports: zod schemas are built at import.
 */

/** Lower-case letters, digits and `-` (never `_`, so a slug is never mistaken for an id). */
export const slugSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    "expected 1-63 lower-case letters, digits or '-', starting with a letter or digit",
  );

const metadataSchema = z
  .record(z.string().max(128), z.string().max(512))
  .refine((value) => Object.keys(value).length <= 64, "at most 64 metadata keys");

const configRef = z.string().min(1).max(200).nullable();

const defaultsSchema = z.strictObject({
  config_id: configRef.optional(),
  user_api_key_config: configRef.optional(),
  metadata: metadataSchema.optional(),
});

const workspaceFields = {
  name: z.string().trim().min(1).max(200),
  slug: slugSchema.optional(),
  description: z.string().max(2000).nullable().optional(),
  defaults: defaultsSchema.optional(),
  security_settings: z.strictObject({ block_inline_config: z.boolean().nullable().optional() }).optional(),
  /** Display template: `{name}` and `{slug}` are replaced (e.g. `{name} ({slug})`). */
  name_format: z.string().max(200).nullable().optional(),
  user_api_key_auto_create: z.boolean().nullable().optional(),
  log_retention_days: z.number().int().min(1).max(3650).nullable().optional(),
  /** Overrides the organisation's denied log export fields when not null. */
  log_export_denied_fields: exportFieldListSchema.optional(),
};

export type WorkspaceDefaultsInput = z.infer<typeof defaultsSchema>;

export const workspaceCreateSchema = z.strictObject(workspaceFields);
export const workspaceUpdateSchema = z.strictObject({ ...workspaceFields, name: workspaceFields.name.optional() });

export type WorkspaceCreateInput = z.infer<typeof workspaceCreateSchema>;
export type WorkspaceUpdateInput = z.infer<typeof workspaceUpdateSchema>;

/** One user (`user_id` or `email`) or several (`users: [{id, role}]`). */
export const memberAddSchema = z.union([
  z.strictObject({
    users: z
      .array(z.strictObject({ id: z.string().min(1).max(200), role: workspaceRoleSchema.default("member") }))
      .min(1)
      .max(100),
  }),
  z.strictObject({
    user_id: z.string().min(1).max(200).optional(),
    email: z.email().optional(),
    role: workspaceRoleSchema.default("member"),
  }),
]);

export const memberUpdateSchema = z.strictObject({ role: workspaceRoleSchema });
