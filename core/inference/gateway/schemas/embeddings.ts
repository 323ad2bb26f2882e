import * as z from "zod/mini";
import { int } from "../../../http/zod-mini.ts";
import { modelName } from "./common.ts";

/** POST /v1/embeddings (OpenAI's shape; `input_type` is accepted for providers that use it, e.g. Cohere). */
export const embeddingRequest = z.looseObject({
  model: modelName,
  input: z.union([
    z.string(),
    z.array(z.string()).check(z.minLength(1), z.maxLength(2048)),
    z.array(int()).check(z.minLength(1)),
    z.array(z.array(int()).check(z.minLength(1))).check(z.minLength(1), z.maxLength(2048)),
  ]),
  encoding_format: z.optional(z.enum(["float", "base64"])),
  dimensions: z.optional(int(z.minimum(1))),
  user: z.optional(z.string()),
  input_type: z.optional(z.string()),
});
