import * as z from "zod";

/** Shared request fields and ranges of spec 4.2, 4.3 and 8. */

export const penalty = z.number().min(-2).max(2);
export const temperature = z.number().min(0).max(2);
export const topP = z.number().min(0).max(1);
export const n = z.number().int().min(1).max(128);
export const seed = z
  .number()
  .int()
  .min(-(2 ** 63))
  .max(2 ** 63);
export const logitBias = z.record(z.string().regex(/^\d+$/, "keys must be token ids"), z.number().min(-100).max(100));
export const stop = z.union([z.string(), z.array(z.string()).max(4, "at most 4 stop sequences")]).nullable();
export const streamOptions = z.looseObject({ include_usage: z.boolean().optional() }).nullable();
export const user = z.string().max(512);
