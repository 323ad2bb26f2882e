import { forwardAnthropicBeta } from "../../inference/formats/messages/anthropic-beta.ts";
import { loadFormat } from "../../inference/formats/registry.ts";
import { handleInference } from "../../inference/gateway/inference.ts";
import type { HandlerMap } from "../../http/context.ts";
import { countMessageTokens } from "../../inference/gateway/count-message-tokens.ts";

export const handlers: HandlerMap = {
  async createMessage(request, ctx) {
    const { messagesRequest } = await import("../../inference/formats/messages/index.ts");
    await loadFormat("messages");
    forwardAnthropicBeta(request, ctx);
    return handleInference("messages", request, ctx, messagesRequest);
  },
  countMessageTokens,
};
