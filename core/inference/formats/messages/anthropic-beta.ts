import type { RequestContext } from "../../../services.ts";

/**
 * Anthropic's clients (Claude Code) opt into features with `anthropic-beta`: it goes to the provider as
 * `x-gateway-forward-headers` would send it (Bedrock reads it into the body; other providers ignore it).
 */
export function forwardAnthropicBeta(request: Request, ctx: RequestContext): void {
  if (ctx.gateway && request.headers.has("anthropic-beta") && !ctx.gateway.forwardHeaders.includes("anthropic-beta")) {
    ctx.gateway = { ...ctx.gateway, forwardHeaders: [...ctx.gateway.forwardHeaders, "anthropic-beta"] };
  }
}
