import * as z from "zod";
import { TRANSPORT_HEADERS, configurationsSchema, headerNameSchema, slugSchema } from "../credentials/schemas.ts";

/** Request bodies of the integration routes (core/routes/handlers/integrations.ts). */

export const integrationCreateSchema = z.strictObject({
  name: z.string().trim().min(1).max(255),
  slug: slugSchema,
  ai_provider_id: z.string().trim().min(1),
  key: z.string().min(1).max(16_384).optional(),
  description: z.string().max(2000).optional(),
  note: z.string().max(2000).optional(),
  workspace_id: z.string().min(1).optional(),
  configurations: configurationsSchema.optional(),
  configuration: configurationsSchema.optional(),
});

export const integrationUpdateSchema = z.strictObject({
  name: z.string().trim().min(1).max(255).optional(),
  slug: slugSchema.optional(),
  key: z.string().min(1).max(16_384).optional(),
  description: z.string().max(2000).optional(),
  note: z.string().max(2000).optional(),
  configurations: configurationsSchema.optional(),
  configuration: configurationsSchema.optional(),
});

const FORBIDDEN_HEADERS = new Set(TRANSPORT_HEADERS);
const customHeaders = z
  .record(
    headerNameSchema(FORBIDDEN_HEADERS),
    z
      .string()
      .max(8192)
      .refine((value) => !/[\r\n\0]/.test(value), "header values cannot contain line breaks"),
  )
  .refine((value) => Object.keys(value).length <= 50, "at most 50 custom headers per model");

const modelSchema = z.looseObject({
  slug: z.string().trim().min(1).max(256),
  enabled: z.boolean().default(true),
  is_custom: z.boolean().optional(),
  custom_headers: customHeaders.optional(),
  name: z.string().max(256).optional(),
  base_model_slug: z.string().max(256).optional(),
});

export const integrationModelsSchema = z.strictObject({
  allow_all_models: z.boolean().optional(),
  models: z.array(modelSchema).max(1000).optional(),
});
