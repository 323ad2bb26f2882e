import * as z from "zod/mini";
import { MAX_MODEL_LENGTH } from "../../inference/gateway/schemas/limits.ts";
import { int } from "../../http/zod-mini.ts";

/**
 * Request bodies and queries of the fine-tuning routes, with OpenAI's limits (its API reference for
 * `POST /fine_tuning/jobs`): suffix up to 64 characters, hyperparameters "auto" or a number in range, at most 5
 * integrations (spec 8) of the wandb shape (spec 2.9), metadata of spec 2.8. `zod/mini`: a data-plane function
 * loads these at init (classic zod weighs on the cold start).
 */

const auto = z.literal("auto");
const hyperparameters = z.strictObject({
  n_epochs: z.optional(z.union([auto, int(z.minimum(1), z.maximum(50))])),
  batch_size: z.optional(z.union([auto, int(z.minimum(1), z.maximum(256))])),
  learning_rate_multiplier: z.optional(z.union([auto, z.number().check(z.gt(0))])),
});

const wandb = z.strictObject({
  type: z.literal("wandb"),
  wandb: z.strictObject({
    project: z.string().check(z.minLength(1)),
    name: z.nullish(z.string()),
    entity: z.nullish(z.string()),
    tags: z.optional(z.array(z.string())),
  }),
});

/** Spec 2.8: at most 16 pairs, keys of at most 64 characters, values of at most 512. */
export const metadataSchema = z
  .record(z.string().check(z.maxLength(64)), z.string().check(z.maxLength(512)))
  .check(z.refine((pairs) => Object.keys(pairs).length <= 16, "at most 16 pairs"));

/** OpenAI's `method` (supervised, dpo, reinforcement): its type checked, its settings passed to the provider. */
const method = z.looseObject({ type: z.enum(["supervised", "dpo", "reinforcement"]) });

const fileId = z.string().check(z.minLength(1), z.maxLength(256));

export const createJobSchema = z.strictObject({
  model: z.string().check(z.minLength(1), z.maxLength(MAX_MODEL_LENGTH)),
  training_file: fileId,
  validation_file: z.nullish(fileId),
  suffix: z.nullish(z.string().check(z.minLength(1), z.maxLength(64))),
  hyperparameters: z.optional(hyperparameters),
  method: z.optional(method),
  seed: z.nullish(int(z.minimum(0), z.maximum(2_147_483_647))),
  integrations: z.nullish(z.array(wandb).check(z.maxLength(5))),
  metadata: z.nullish(metadataSchema),
});
export type CreateJobInput = z.infer<typeof createJobSchema>;

const limit = (fallback: number) =>
  z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100)), fallback);
const after = z.optional(z.string().check(z.minLength(1)));

/** `GET /fine_tuning/jobs?after&limit&metadata[k]=v` (metadata pairs are read apart: see the list handler). */
export const listJobsQuerySchema = z.looseObject({ after, limit: limit(20) });

/** Events (OpenAI's default page: 20) and checkpoints (10). */
export const eventsQuerySchema = z.looseObject({ after, limit: limit(20) });
export const checkpointsQuerySchema = z.looseObject({ after, limit: limit(10) });
