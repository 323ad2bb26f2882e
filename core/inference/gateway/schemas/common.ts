import * as z from "zod/mini";
import { rawJsonInteger } from "../../../http/json.ts";
import { int } from "../../../http/zod-mini.ts";
import { MAX_MODEL_LENGTH } from "./limits.ts";

/**
 * Shared request fields and ranges of spec 4.2, 4.3 and 8. The request schemas use `zod/mini` (functional
 * checks: `z.number().check(z.int(), z.minimum(1))` is classic zod's `z.number().int().min(1)`): data-plane
 * functions load them at init, and classic zod's bundle and import time weigh on the cold start.
 */

export const modelName = z.string().check(z.minLength(1), z.maxLength(MAX_MODEL_LENGTH));

export const penalty = z.number().check(z.minimum(-2), z.maximum(2));
export const temperature = z.number().check(z.minimum(0), z.maximum(2));
export const topP = z.number().check(z.minimum(0), z.maximum(1));
export const n = int(z.minimum(1), z.maximum(128));
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/**
 * A signed 64-bit integer: a safe integer as a number, a larger one as the raw JSON of its digits (read so by
 * core/http/json.ts, so it reaches the provider exactly).
 */
export const seed = z.custom<number | { readonly rawJSON: string }>((value) => {
  if (typeof value === "number") return Number.isSafeInteger(value);
  const digits = rawJsonInteger(value);
  return digits !== undefined && digits >= INT64_MIN && digits <= INT64_MAX;
}, "expected an integer from -9223372036854775808 to 9223372036854775807");
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
