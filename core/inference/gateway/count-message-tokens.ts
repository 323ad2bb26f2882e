import { loadFormat } from "../formats/registry.ts";
import type { RequestContext } from "../../services.ts";
import { readJson, validate } from "../../http/json.ts";
import { noCount, routeTokenCount } from "./routed-token-count.ts";

/**
 * `POST /v1/messages/count_tokens` (Anthropic's token counting) for any provider: routed like a message,
 * answered by Anthropic's own count endpoint when the target is Anthropic, else counted by the gateway's tokenizer
 * as the chat request the body translates to. `{input_tokens}` either way.
 */
export async function countMessageTokens(request: Request, ctx: RequestContext): Promise<Response> {
  const messages = await import("../formats/messages/index.ts");
  await loadFormat("messages");
  const json = await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  const body = validate(messages.countTokensRequest, json) as Record<string, any>;
  return routeTokenCount(request, ctx, "messages", body, {
    async nativeRequest(target, transform) {
      if (target.provider !== "anthropic") return undefined;
      const { anthropicCountTokensRequest } = await import("../../providers/anthropic/index.ts");
      return anthropicCountTokensRequest(body, transform);
    },
    nativeAnswer(answer) {
      if (typeof answer.input_tokens !== "number") throw noCount("input_tokens");
      return { input_tokens: answer.input_tokens };
    },
    estimate: async () => ({ input_tokens: await messages.estimateInputTokens(body) }),
  });
}
