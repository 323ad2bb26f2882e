import { handleInference } from "../../inference/gateway/inference.ts";
import { moderationRequest } from "../../inference/gateway/schemas/moderations.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  createModeration: (request, ctx) => handleInference("moderations", request, ctx, moderationRequest),
};
