import type { TransformContext } from "../types.ts";
import { joinUrl } from "../url.ts";
import { ANTHROPIC_VERSION } from "./messages.ts";

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
