import { forwardAnthropicBeta } from "../../formats/messages/anthropic-beta.ts";
import { loadFormat } from "../../formats/registry.ts";
import { handleInference } from "../../gateway/inference.ts";
import type { HandlerMap } from "../../http/context.ts";
import { countMessageTokens } from "../../messages/count-tokens.ts";

export const handlers: HandlerMap = {
  async createMessage(request, ctx) {
    const { messagesRequest } = await import("../../formats/messages/index.ts");
    await loadFormat("messages");
    forwardAnthropicBeta(request, ctx);
    return handleInference("messages", request, ctx, messagesRequest);
  },
  countMessageTokens,
};
