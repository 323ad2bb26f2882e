import type { PassthroughContext, PassthroughEndpoint, ProviderTarget } from "../types.ts";
import { ANTHROPIC_BASE_URL } from "./http.ts";
import { ANTHROPIC_VERSION } from "./messages.ts";

/**
 * Pass-through to Anthropic's API (https://docs.anthropic.com/en/api/overview): `https://api.anthropic.com/v1`
 * (or the custom host, its `/v1` not doubled) + the client's path, the key in `x-api-key`. `anthropic-version`
 * is required on every call: the client's own wins, else the target's forwarded one, else 2023-06-01.
 * `anthropic-beta` and the other client headers are forwarded as they are.
 */
export function anthropicPassthrough(target: ProviderTarget, ctx: PassthroughContext): PassthroughEndpoint {
  const base = (target.customHost ?? ANTHROPIC_BASE_URL).replace(/\/+$/, "");
  const headers: Record<string, string> = {};
  if (!ctx.headers?.["anthropic-version"]) headers["anthropic-version"] = ANTHROPIC_VERSION;
  for (const [name, value] of Object.entries(target.forwardHeaders ?? {})) headers[name.toLowerCase()] = value;
  if (target.apiKey) headers["x-api-key"] = target.apiKey;
  return { baseUrl: /\/v1$/.test(base) ? base : `${base}/v1`, headers };
}
