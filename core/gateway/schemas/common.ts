import * as z from "zod/mini";
import { int } from "../../http/zod-mini.ts";

/**
 * Shared request fields and ranges of spec 4.2, 4.3 and 8. The request schemas use `zod/mini` (functional
 * checks: `z.number().check(z.int(), z.minimum(1))` is classic zod's `z.number().int().min(1)`): data-plane
 * functions load them at init, and classic zod's bundle and import time weigh on the cold start.
 */

export const penalty = z.number().check(z.minimum(-2), z.maximum(2));
export const temperature = z.number().check(z.minimum(0), z.maximum(2));
export const topP = z.number().check(z.minimum(0), z.maximum(1));
export const n = int(z.minimum(1), z.maximum(128));
export const seed = int(z.minimum(-(2 ** 63)), z.maximum(2 ** 63));
export const logitBias = z.record(
  z.string().check(z.regex(/^\d+$/, "keys must be token ids")),
  z.number().check(z.minimum(-100), z.maximum(100)),
);
export const stop = z.nullable(
  z.union([z.string(), z.array(z.string()).check(z.maxLength(4, "at most 4 stop sequences"))]),
);
export const streamOptions = z.nullable(z.looseObject({ include_usage: z.optional(z.boolean()) }));
export const user = z.string().check(z.maxLength(512));

/** `stream_options` means something only on a stream: refused otherwise, as OpenAI does. */
export function checkStreamOptions(
  body: { stream?: boolean | null; stream_options?: unknown },
  ctx: z.core.$RefinementCtx,
): void {
  if (body.stream_options && body.stream !== true) {
    ctx.addIssue({
      code: "custom",
      path: ["stream_options"],
      message: "stream_options is only allowed when stream is true",
    });
  }
}
