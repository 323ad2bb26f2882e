import { loadFormat } from "../formats/registry.ts";
import { failureHeaders, gatewayHeadersOf, LeafResolver, upstreamToHttp } from "./plan.ts";
import { requestUpstream } from "../../providers/upstream/client.ts";
import type { RequestContext } from "../../services.ts";
import { readJson, validate } from "../../http/json.ts";
import { mapUpstreamError } from "../../providers/errors.ts";
import { UpstreamError } from "../../providers/types.ts";
import { RoutingFailure, runStrategy } from "../routing/engine.ts";
import { requireRouting } from "../routing/source.ts";
import { NO_TRUSTED_HOSTS } from "../../security/custom-host.ts";

/**
 * `POST /v1/messages/count_tokens` (Anthropic's token counting) for any provider: routed like a message (config,
 * fallbacks, saved providers), answered by Anthropic's own count endpoint when the target is Anthropic, else
 * counted by the gateway's tokenizer as the chat request the body translates to. `{input_tokens}` either way.
 */
export async function countMessageTokens(request: Request, ctx: RequestContext): Promise<Response> {
  const messages = await import("../formats/messages/index.ts");
  await loadFormat("messages");
  const json = await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  const body = validate(messages.countTokensRequest, json) as Record<string, any>;
  const gateway = gatewayHeadersOf(request, ctx);
  const config = await requireRouting(gateway, ctx);
  const resolver = new LeafResolver(request, gateway, ctx);
  let provider: string | undefined;
  try {
    const result = await runStrategy(config, {
      signal: ctx.signal,
      queryContext: () => ({ metadata: gateway.metadata ?? {}, params: body, url: { pathname: ctx.path ?? "" } }),
      async call(leaf) {
        const resolved = await resolver.resolve(leaf);
        provider = resolved.target.provider;
        if (provider !== "anthropic") {
          return Response.json({ input_tokens: await messages.estimateInputTokens(body) });
        }
        const { anthropicCountTokensRequest } = await import("../../providers/anthropic/index.ts");
        const upstreamRequest = anthropicCountTokensRequest(body, {
          target: resolved.target,
          route: "messages",
          stream: false,
          model: String(body.model),
          now: Math.floor(Date.now() / 1000),
          requestId: ctx.traceId,
          includeUsage: false,
          signal: ctx.signal,
          trustedHosts: ctx.services.trustedHosts,
        });
        const reply = await requestUpstream(upstreamRequest, {
          timeoutMs: resolved.timeoutMs,
          signal: ctx.signal,
          trusted: ctx.services.trustedHosts ?? NO_TRUSTED_HOSTS,
        });
        const text = await reply.text();
        if (reply.status < 200 || reply.status > 299) {
          const mapped = mapUpstreamError(reply.status, text);
          throw new UpstreamError(reply.status, mapped.message, {
            type: mapped.type,
            code: mapped.code,
            param: mapped.param,
            headers: reply.headers,
          });
        }
        const answer = JSON.parse(text) as { input_tokens?: unknown };
        if (typeof answer.input_tokens !== "number") {
          throw new UpstreamError(502, "The provider's token count has no input_tokens.", {
            code: "invalid_upstream_response",
          });
        }
        return Response.json({ input_tokens: answer.input_tokens });
      },
    });
    return result.response;
  } catch (error) {
    if (error instanceof RoutingFailure) throw upstreamToHttp(error.error, failureHeaders(error, provider));
    throw error;
  }
}
