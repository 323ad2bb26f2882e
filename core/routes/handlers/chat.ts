import { handleInference } from "../../gateway/inference.ts";
import { chatCompletionRequest, normaliseChatRequest } from "../../gateway/schemas/chat.ts";
import { simpleChatRequest } from "../../gateway/schemas/simple-chat.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  chatCompletions: (request, ctx) =>
    handleInference("chat", request, ctx, chatCompletionRequest, normaliseChatRequest, simpleChatRequest),
};
