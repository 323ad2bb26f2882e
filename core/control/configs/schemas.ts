import * as z from "zod";
import { slugSchema } from "../credentials/schemas.ts";

/** Request bodies of the saved-config routes (core/routes/handlers/configs.ts). */

/** `config` as an object, or (as Portkey's API accepts) a JSON string of one. */
const configValue = z.union([z.record(z.string(), z.unknown()), z.string()]);
const isDefault = z
  .union([z.boolean(), z.literal(0), z.literal(1)])
  .transform((value) => value === true || value === 1);

export const configCreateSchema = z.strictObject({
  name: z.string().trim().min(1).max(255),
  slug: slugSchema.optional(),
  config: configValue,
  workspace_id: z.string().min(1).optional(),
  is_default: isDefault.optional(),
  isDefault: isDefault.optional(),
});

export const configUpdateSchema = z.strictObject({
  name: z.string().trim().min(1).max(255).optional(),
  slug: slugSchema.optional(),
  config: configValue.optional(),
  is_default: isDefault.optional(),
  isDefault: isDefault.optional(),
  status: z.literal("active").optional(),
});

export type ConfigCreateInput = z.infer<typeof configCreateSchema>;
export type ConfigUpdateInput = z.infer<typeof configUpdateSchema>;
