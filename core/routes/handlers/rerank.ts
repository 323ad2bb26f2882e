import { handleInference } from "../../inference/gateway/inference.ts";
import { rerankRequest } from "../../inference/gateway/schemas/rerank.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  rerank: (request, ctx) => handleInference("rerank", request, ctx, rerankRequest),
};
