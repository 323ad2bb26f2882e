import * as z from "zod";

/** Request bodies of the model pricing routes (core/routes/handlers/model-pricing.ts). */

const usd = z.number().finite().min(0).max(1_000_000);

/** Tokens in USD per million; the media families per unit (core/inference/catalog/unit-prices/types.ts). */
export const pricesSchema = z
  .strictObject({
    input: usd.optional(),
    output: usd.optional(),
    cache_read: usd.optional(),
    cache_write: usd.optional(),
    reasoning: usd.optional(),
    /** Fine-tuning: USD per million trained tokens (no maintained source publishes training prices). */
    training: usd.optional(),
    per_image: z.union([usd, z.record(z.string().min(1).max(64), usd)]).optional(),
    per_second: usd.optional(),
    per_character: usd.optional(),
    per_search: usd.optional(),
    per_page: usd.optional(),
  })
  .refine((prices) => Object.values(prices).some((value) => value !== undefined), "set at least one price");

export const modelPricingCreateSchema = z.strictObject({
  provider: z.string().trim().min(1).max(64),
  model: z.string().trim().min(1).max(256),
  workspace_id: z.string().min(1).optional(),
  integration_id: z.string().min(1).optional(),
  prices: pricesSchema,
  note: z.string().max(2000).optional(),
});

export const modelPricingUpdateSchema = z.strictObject({
  prices: pricesSchema.optional(),
  note: z.string().max(2000).nullable().optional(),
});

export type ModelPricingCreateInput = z.infer<typeof modelPricingCreateSchema>;
export type ModelPricingUpdateInput = z.infer<typeof modelPricingUpdateSchema>;
export type PricesInput = z.infer<typeof pricesSchema>;
