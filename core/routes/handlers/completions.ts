import { handleInference } from "../../gateway/inference.ts";
import { completionRequest } from "../../gateway/schemas/completions.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  completions: (request, ctx) => handleInference("completions", request, ctx, completionRequest),
};
