import { readAnthropicClientHeaders } from "../../inference/formats/messages/client-headers.ts";
import { loadFormat } from "../../inference/formats/registry.ts";
import { handleInference } from "../../inference/gateway/inference.ts";
import type { HandlerMap } from "../../http/context.ts";
import { countMessageTokens } from "../../inference/gateway/count-message-tokens.ts";
import { loadOnce } from "../../util/load-once.ts";

/** The Messages format, loaded with the first call (a dynamic import per request ran the module loader each time). */
const messagesFormat = loadOnce(() => import("../../inference/formats/messages/index.ts"));

/** Anthropic's Messages API (POST /v1/messages, /v1/messages/count_tokens) on every provider. */
export const handlers: HandlerMap = {
  async createMessage(request, ctx) {
    const { messagesRequest } = await messagesFormat.get();
    await loadFormat("messages");
    readAnthropicClientHeaders(request, ctx);
    return handleInference("messages", request, ctx, messagesRequest);
  },
  async countMessageTokens(request, ctx) {
    readAnthropicClientHeaders(request, ctx);
    return countMessageTokens(request, ctx);
  },
};
