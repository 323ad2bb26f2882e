import * as z from "zod/mini";
import { int } from "../../../http/zod-mini.ts";
import { modelName } from "./common.ts";

/**
 * POST /v1/rerank (spec 4.1): Cohere's shape, which Jina, Voyage and the compatible servers follow. Documents are
 * strings, or objects (`{text}`, or fields picked by `rank_fields`). For Bedrock the model is the full resource
 * name (ARN) of the reranking model.
 */
export const rerankRequest = z.looseObject({
  model: modelName,
  query: z.string().check(z.minLength(1)),
  documents: z
    .array(z.union([z.string(), z.record(z.string(), z.unknown())]))
    .check(z.minLength(1), z.maxLength(10_000)),
  top_n: z.optional(int(z.minimum(1))),
  return_documents: z.optional(z.boolean()),
  max_chunks_per_doc: z.optional(int(z.minimum(1))),
  rank_fields: z.optional(z.array(z.string())),
});
