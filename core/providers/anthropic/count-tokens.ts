import type { TransformContext, UpstreamRequest } from "../types.ts";
import { anthropicHeaders, anthropicUrl } from "./http.ts";

/**
 * The fields POST /v1/messages/count_tokens takes. The endpoint refuses fields it does not know (max_tokens,
 * stream, temperature...), and a client may send its create body as it is: only these go upstream.
 */
const COUNT_FIELDS = ["messages", "system", "tools", "tool_choice", "thinking", "mcp_servers", "context_management"];

/** Anthropic's own token count of a Messages body (answers `{input_tokens}`). */
export function anthropicCountTokensRequest(body: Record<string, any>, ctx: TransformContext): UpstreamRequest {
  const payload: Record<string, unknown> = { model: ctx.model || body.model };
  for (const field of COUNT_FIELDS) if (body[field] !== undefined) payload[field] = body[field];
  return {
    url: anthropicUrl(ctx, "/messages/count_tokens"),
    method: "POST",
    headers: { ...anthropicHeaders(ctx), "content-type": "application/json" },
    body: JSON.stringify(payload),
  };
}
