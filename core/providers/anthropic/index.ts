import { ANTHROPIC_HISTORY, type ProviderAdapter } from "../types.ts";
import { anthropicUpstreamError, isAnthropicError } from "./errors.ts";
import { anthropicHeaders, anthropicUrl } from "./http.ts";
import { fromAnthropicMessage, toAnthropicMessagesRequest } from "./messages.ts";
import { anthropicMessagesRoute } from "./native-messages.ts";
import { anthropicPassthrough } from "./passthrough.ts";
import { createAnthropicStreamTransformer } from "./stream.ts";

export { anthropicErrorStatus, anthropicUpstreamError, isAnthropicError } from "./errors.ts";
export {
  ANTHROPIC_VERSION,
  type AnthropicRequestOptions,
  contentToBlocks,
  DEFAULT_MAX_TOKENS,
  fromAnthropicMessage,
  mapStopReason,
  toAnthropicMessagesRequest,
  toChatUsage,
} from "./messages.ts";
export { createAnthropicStreamTransformer } from "./stream.ts";
export { ANTHROPIC_BASE_URL, anthropicHeaders, anthropicUrl } from "./http.ts";
export {
  anthropicMessagesRoute,
  createNativeMessagesStreamTransformer,
  fromNativeMessage,
  nativeMessagesEvent,
} from "./native-messages.ts";
export { anthropicCountTokensRequest } from "./count-tokens.ts";

/** GET /v1/models (`{data: [{id, display_name, created_at, type}], has_more, ...}`) -> OpenAI model list. */
export function fromAnthropicModelList(upstream: any): object {
  if (isAnthropicError(upstream)) throw anthropicUpstreamError(upstream);
  const data = Array.isArray(upstream?.data) ? upstream.data : [];
  return {
    object: "list",
    data: data.map((model: any) => {
      const created = Date.parse(model?.created_at ?? "");
      return {
        id: model?.id,
        object: "model",
        created: Number.isFinite(created) ? Math.floor(created / 1000) : 0,
        owned_by: "anthropic",
        ...(model?.display_name ? { display_name: model.display_name } : {}),
      };
    }),
  };
}

export const anthropicAdapter: ProviderAdapter = {
  id: "anthropic",
  name: "Anthropic",
  routes: {
    chat: {
      continuesAssistantTurn: true,
      keepsHistory: () => ANTHROPIC_HISTORY,
      buildRequest(body, ctx) {
        const payload = toAnthropicMessagesRequest(body, { model: ctx.model || body.model, stream: ctx.stream });
        return {
          url: anthropicUrl(ctx, "/messages"),
          method: "POST",
          headers: { ...anthropicHeaders(ctx), "content-type": "application/json" },
          body: JSON.stringify(payload),
        };
      },
      transformResponse: (upstream, ctx) => fromAnthropicMessage(upstream, ctx),
      stream: { framing: "sse", createTransformer: (ctx) => createAnthropicStreamTransformer(ctx) },
    },
    messages: anthropicMessagesRoute,
    models: {
      // One page of up to 1000 models (the documented maximum) covers Anthropic's whole list.
      buildRequest: (_body, ctx) => ({
        url: anthropicUrl(ctx, "/models?limit=1000"),
        method: "GET",
        headers: anthropicHeaders(ctx),
      }),
      transformResponse: (upstream) => fromAnthropicModelList(upstream),
    },
  },
  passthrough: anthropicPassthrough,
  // Non-2xx answers: the generic mapper in ../errors.ts already reads `{type: "error", error: {type, message}}`.
};
