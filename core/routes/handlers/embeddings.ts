import { handleInference } from "../../inference/gateway/inference.ts";
import { embeddingRequest } from "../../inference/gateway/schemas/embeddings.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  embeddings: (request, ctx) => handleInference("embeddings", request, ctx, embeddingRequest),
};
