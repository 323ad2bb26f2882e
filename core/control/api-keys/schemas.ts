import * as z from "zod";

/** Request bodies of the API-key routes (core/routes/handlers/api-keys.ts). */

const timeValue = z.union([z.string(), z.number()]).nullable().optional();

export const keyFieldsSchema = z.looseObject({
  name: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(2000).nullable().optional(),
  scopes: z.array(z.string()).max(200).optional(),
  // portkey-ai sends `defaults` as an open object; `config_id` (id or slug) routes the key's requests.
  defaults: z
    .looseObject({ config_id: z.string().trim().min(1).max(128).nullable().optional() })
    .nullable()
    .optional(),
  rotation_period: z.union([z.string(), z.number()]).nullable().optional(),
  rotation_period_days: z.union([z.string(), z.number()]).nullable().optional(),
  next_rotation_at: timeValue,
  expires_at: timeValue,
});

export const createKeySchema = keyFieldsSchema.extend({
  name: z.string().trim().min(1).max(200),
  workspace_id: z.string().min(1).optional(),
  user_id: z.string().min(1).optional(),
  type: z.string().optional(),
  "sub-type": z.string().optional(),
});

export type KeyFields = z.infer<typeof keyFieldsSchema>;
export type KeyCreateInput = z.infer<typeof createKeySchema>;
