import * as z from "zod";

/** POST /v1/embeddings (OpenAI's shape; `input_type` is accepted for providers that use it, e.g. Cohere). */
export const embeddingRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([
    z.string(),
    z.array(z.string()).min(1).max(2048),
    z.array(z.number().int()).min(1),
    z.array(z.array(z.number().int()).min(1)).min(1).max(2048),
  ]),
  encoding_format: z.enum(["float", "base64"]).optional(),
  dimensions: z.number().int().min(1).optional(),
  user: z.string().optional(),
  input_type: z.string().optional(),
});

export type EmbeddingRequest = z.infer<typeof embeddingRequest>;
