import { failureHeaders, gatewayHeadersOf, LeafResolver, upstreamToHttp } from "./plan.ts";
import { requestUpstream } from "../../providers/upstream/client.ts";
import type { RequestContext } from "../../services.ts";
import { mapUpstreamError } from "../../providers/errors.ts";
import type { ProviderTarget, TransformContext, UpstreamRequest } from "../../providers/types.ts";
import { UpstreamError } from "../../providers/types.ts";
import { RoutingFailure, runStrategy } from "../routing/engine.ts";
import { requireRouting } from "../routing/source.ts";
import { NO_TRUSTED_HOSTS } from "../../security/custom-host.ts";

type Json = Record<string, any>;

/** How one format counts the input tokens of a body (Anthropic's count_tokens, Gemini's countTokens). */
export interface TokenCounting {
  /** The target's own count endpoint for the body, or undefined: the gateway counts it. */
  nativeRequest(target: ProviderTarget, ctx: TransformContext): Promise<UpstreamRequest | undefined>;
  /** The client's answer from the target's (throws UpstreamError 502 when it holds no count). */
  nativeAnswer(answer: Json): Json;
  /** The gateway's own count, answered in the format's shape. */
  estimate(): Promise<Json>;
}

/**
 * A token count routed like the request it counts (config, fallbacks, saved providers, the provider key of the
 * route's clients): each target answers with its own count endpoint when it has one, else the gateway counts
 * with its tokenizer. No usage, cost or guardrails: counting reads nothing out to a model.
 */
export async function routeTokenCount(
  request: Request,
  ctx: RequestContext,
  route: "messages" | "gemini",
  body: Json,
  counting: TokenCounting,
): Promise<Response> {
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
        const upstreamRequest = await counting.nativeRequest(resolved.target, {
          target: resolved.target,
          route,
          stream: false,
          model: String(body.model),
          now: Math.floor(Date.now() / 1000),
          requestId: ctx.traceId,
          includeUsage: false,
          signal: ctx.signal,
          trustedHosts: ctx.services.trustedHosts,
        });
        if (!upstreamRequest) return Response.json(await counting.estimate());
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
        let answer: Json;
        try {
          answer = JSON.parse(text);
        } catch {
          throw new UpstreamError(502, "The provider answered with malformed JSON.", {
            code: "invalid_upstream_response",
          });
        }
        return Response.json(counting.nativeAnswer(answer));
      },
    });
    return result.response;
  } catch (error) {
    if (error instanceof RoutingFailure) throw upstreamToHttp(error.error, failureHeaders(error, provider));
    throw error;
  }
}

/** The 502 for a count endpoint's answer without its count. */
export const noCount = (field: string) =>
  new UpstreamError(502, `The provider's token count has no ${field}.`, { code: "invalid_upstream_response" });
