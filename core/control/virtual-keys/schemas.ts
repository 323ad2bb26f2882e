import * as z from "zod";
import { configurationsSchema, slugSchema } from "../credentials/schemas.ts";

/**
 * Request bodies of the legacy virtual-key routes (core/routes/handlers/virtual-keys.ts). Fields the Portkey
 * SDK may send that this gateway does not implement here (`usage_limits`, `rate_limits`) are ignored.
 */

const text = z.string().trim().min(1);

/** Portkey's flat Azure fields (`resourceName`, `deploymentName`, `apiVersion`) and our `configurations`. */
const flatFields = {
  resourceName: text.optional(),
  deploymentName: text.optional(),
  apiVersion: text.optional(),
  resource_name: text.optional(),
  deployment_name: text.optional(),
  api_version: text.optional(),
  custom_host: text.optional(),
  configurations: configurationsSchema.optional(),
  model_config: configurationsSchema.optional(),
};

export const virtualKeyCreateSchema = z.object({
  name: z.string().trim().min(1).max(255),
  provider: text,
  key: z.string().min(1).max(16_384).optional(),
  slug: slugSchema.optional(),
  note: z.string().max(2000).nullable().optional(),
  workspace_id: z.string().min(1).optional(),
  ...flatFields,
});

export const virtualKeyUpdateSchema = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  key: z.string().min(1).max(16_384).optional(),
  note: z.string().max(2000).nullable().optional(),
  ...flatFields,
});

export type VirtualKeyCreateInput = z.infer<typeof virtualKeyCreateSchema>;
export type VirtualKeyUpdateInput = z.infer<typeof virtualKeyUpdateSchema>;
/** The provider settings of either body, in their legacy places. */
export type VirtualKeyFlatInput = { [K in keyof typeof flatFields]?: z.infer<(typeof flatFields)[K]> };
