import { handleInference } from "../../gateway/inference.ts";
import { moderationRequest } from "../../gateway/schemas/moderations.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  createModeration: (request, ctx) => handleInference("moderations", request, ctx, moderationRequest),
};
