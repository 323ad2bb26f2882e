import type { PassthroughContext, PassthroughEndpoint, ProviderTarget } from "../types.ts";
import { COHERE_BASE_URL } from "./base-url.ts";

/**
 * Pass-through to Cohere (https://docs.cohere.com/reference/about). Cohere serves two API versions side by side:
 * `/v2/chat`, `/v2/embed`, `/v2/rerank` beside `/v1/tokenize`, `/v1/models`, `/v1/datasets`, `/v1/embed-jobs`...
 * A client path after the gateway's `/v1` is Cohere's `/v1` path (`/v1/tokenize` -> `https://api.cohere.com/v1/tokenize`);
 * a path that names its version itself (`/v1/proxy/v2/chat`, `/v1/v2/rerank`, `/v1/proxy/v1/models`) goes to
 * that version. Auth: `Authorization: Bearer`.
 */
export function coherePassthrough(target: ProviderTarget, ctx: PassthroughContext): PassthroughEndpoint {
  const origin = (target.customHost ?? COHERE_BASE_URL).replace(/\/+$/, "");
  const versioned = /^\/v\d+(\/|$)/.test(ctx.path ?? "");
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.forwardHeaders ?? {})) headers[name.toLowerCase()] = value;
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  return { baseUrl: versioned ? origin : `${origin}/v1`, headers };
}
