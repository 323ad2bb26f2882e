import type { RequestContext } from "../../../services.ts";
import { parseGatewayHeaders } from "../../../http/gateway-headers.ts";

/**
 * What Anthropic's clients (the Anthropic SDK, Claude Code, @ai-sdk/anthropic, LangChain's ChatAnthropic) put in
 * headers, read into the request's gateway headers:
 * - `x-api-key` is the provider key (where OpenAI's clients send `Authorization: Bearer`): it reaches the target
 *   in the target's own auth form (Anthropic's `x-api-key`, a translated provider's bearer or key header);
 * - `anthropic-beta` opts into features: it goes to the provider as `x-gateway-forward-headers` would send it
 *   (Anthropic takes the header, Bedrock reads it into the body; other providers ignore it).
 */
export function readAnthropicClientHeaders(request: Request, ctx: RequestContext): void {
  const gateway = ctx.gateway ?? parseGatewayHeaders(request.headers, ctx.traceId);
  const providerKey = request.headers.get("x-api-key") ?? undefined;
  const beta = request.headers.has("anthropic-beta") && !gateway.forwardHeaders.includes("anthropic-beta");
  if (!providerKey && !beta) {
    ctx.gateway = gateway;
    return;
  }
  ctx.gateway = {
    ...gateway,
    ...(providerKey ? { providerKey } : {}),
    ...(beta ? { forwardHeaders: [...gateway.forwardHeaders, "anthropic-beta"] } : {}),
  };
}
