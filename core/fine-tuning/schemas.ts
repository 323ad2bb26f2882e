import * as z from "zod";
import { MAX_MODEL_LENGTH } from "../gateway/schemas/limits.ts";

/**
 * Request bodies and queries of the fine-tuning routes, with OpenAI's limits (its API reference for
 * `POST /fine_tuning/jobs`): suffix up to 64 characters, hyperparameters "auto" or a number in range, at most 5
 * integrations (spec 8) of the wandb shape (spec 2.9), metadata of spec 2.8.
 */

const auto = z.literal("auto");
const hyperparameters = z.strictObject({
  n_epochs: z.union([auto, z.number().int().min(1).max(50)]).optional(),
  batch_size: z.union([auto, z.number().int().min(1).max(256)]).optional(),
  learning_rate_multiplier: z.union([auto, z.number().gt(0)]).optional(),
});

const wandb = z.strictObject({
  type: z.literal("wandb"),
  wandb: z.strictObject({
    project: z.string().min(1),
    name: z.string().nullish(),
    entity: z.string().nullish(),
    tags: z.array(z.string()).optional(),
  }),
});

/** Spec 2.8: at most 16 pairs, keys of at most 64 characters, values of at most 512. */
export const metadataSchema = z
  .record(z.string().max(64), z.string().max(512))
  .refine((pairs) => Object.keys(pairs).length <= 16, "at most 16 pairs");

/** OpenAI's `method` (supervised, dpo, reinforcement): its type checked, its settings passed to the provider. */
const method = z.looseObject({ type: z.enum(["supervised", "dpo", "reinforcement"]) });

export const createJobSchema = z.strictObject({
  model: z.string().min(1).max(MAX_MODEL_LENGTH),
  training_file: z.string().min(1).max(256),
  validation_file: z.string().min(1).max(256).nullish(),
  suffix: z.string().min(1).max(64).nullish(),
  hyperparameters: hyperparameters.optional(),
  method: method.optional(),
  seed: z.number().int().min(0).max(2_147_483_647).nullish(),
  integrations: z.array(wandb).max(5).nullish(),
  metadata: metadataSchema.nullish(),
});
export type CreateJobInput = z.infer<typeof createJobSchema>;

const limit = (fallback: number) => z.coerce.number().int().min(1).max(100).default(fallback);

/** `GET /fine_tuning/jobs?after&limit&metadata[k]=v` (metadata pairs are read apart: see readJobListQuery). */
export const listJobsQuerySchema = z.looseObject({ after: z.string().min(1).optional(), limit: limit(20) });

/** Events (OpenAI's default page: 20) and checkpoints (10). */
export const eventsQuerySchema = z.looseObject({ after: z.string().min(1).optional(), limit: limit(20) });
export const checkpointsQuerySchema = z.looseObject({ after: z.string().min(1).optional(), limit: limit(10) });
