import { loadFormat } from "../../formats/registry.ts";
import { handleInference } from "../../gateway/inference.ts";
import type { HandlerMap } from "../../http/context.ts";
import { countMessageTokens } from "../../messages/count-tokens.ts";

export const handlers: HandlerMap = {
  async createMessage(request, ctx) {
    const { messagesRequest } = await import("../../formats/messages/index.ts");
    await loadFormat("messages");
    // Anthropic's clients (Claude Code) opt into features with `anthropic-beta`: it goes to the provider as
    // `x-gateway-forward-headers` would send it (Bedrock reads it into the body; other providers ignore it).
    if (
      ctx.gateway &&
      request.headers.has("anthropic-beta") &&
      !ctx.gateway.forwardHeaders.includes("anthropic-beta")
    ) {
      ctx.gateway = { ...ctx.gateway, forwardHeaders: [...ctx.gateway.forwardHeaders, "anthropic-beta"] };
    }
    return handleInference("messages", request, ctx, messagesRequest);
  },
  countMessageTokens,
};
