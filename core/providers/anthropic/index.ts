import type { ProviderAdapter, TransformContext } from "../types.ts";
import { joinUrl } from "../url.ts";
import { anthropicUpstreamError, isAnthropicError } from "./errors.ts";
import { ANTHROPIC_VERSION, fromAnthropicMessage, toAnthropicMessagesRequest } from "./messages.ts";
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

export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";

/** `{base}/v1/<path>`; a custom host given with its `/v1` segment is not doubled. */
export function anthropicUrl(ctx: TransformContext, path: string): string {
  const base = (ctx.target.customHost ?? ANTHROPIC_BASE_URL).replace(/\/+$/, "");
  return joinUrl(/\/v1$/.test(base) ? base : `${base}/v1`, path);
}

/** Auth and version headers; forwarded headers (e.g. `anthropic-beta`) pass as they are. */
export function anthropicHeaders(ctx: TransformContext): Record<string, string> {
  const headers: Record<string, string> = { "anthropic-version": ANTHROPIC_VERSION };
  if (ctx.target.apiKey) headers["x-api-key"] = ctx.target.apiKey;
  for (const [name, value] of Object.entries(ctx.target.forwardHeaders ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

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
  // Non-2xx answers: the generic mapper in ../errors.ts already reads `{type: "error", error: {type, message}}`.
};
