import type { TransformContext } from "../types.ts";

export const GEMINI_BASE_URL = "https://generativelanguage.googleapis.com";

/** Base URL with its API version: a custom host may already end in `/v1beta` (or `/v1`). */
export function geminiApiBase(ctx: Pick<TransformContext, "target">): string {
  const base = (ctx.target.customHost ?? GEMINI_BASE_URL).replace(/\/+$/, "");
  return /\/v1(beta|alpha)?$/.test(base) ? base : `${base}/v1beta`;
}
