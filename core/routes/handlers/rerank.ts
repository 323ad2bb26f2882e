import { handleInference } from "../../gateway/inference.ts";
import { rerankRequest } from "../../gateway/schemas/rerank.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  rerank: (request, ctx) => handleInference("rerank", request, ctx, rerankRequest),
};
