import { handleInference } from "../../inference/gateway/inference.ts";
import { completionRequest } from "../../inference/gateway/schemas/completions.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  completions: (request, ctx) => handleInference("completions", request, ctx, completionRequest),
};
