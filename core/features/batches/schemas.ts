import * as z from "zod/mini";
import { int } from "../../http/zod-mini.ts";
import { BATCH_ENDPOINTS } from "./types.ts";

/** Spec 2.8: at most 16 pairs, keys of at most 64 characters, values of at most 512. */
const metadata = z
  .record(
    z.string().check(z.maxLength(64, "metadata keys are at most 64 characters")),
    z.string().check(z.maxLength(512, "at most 512 characters")),
  )
  .check(z.refine((pairs) => Object.keys(pairs).length <= 16, "metadata holds at most 16 pairs"));

/**
 * `completion_window`: OpenAI accepts only `24h`; the gateway also accepts any whole number of hours from 1 to
 * 168 (a week), so a gateway-run batch may be given longer. A native provider that supports only 24h refuses
 * other windows when the batch is submitted (the batch then fails).
 */
export const COMPLETION_WINDOW = /^([1-9]\d{0,2})h$/;
export const MAX_COMPLETION_HOURS = 168;

const completionWindow = z.string().check(
  z.refine((value) => {
    const match = COMPLETION_WINDOW.exec(value);
    return match !== null && Number(match[1]) <= MAX_COMPLETION_HOURS;
  }, `must be a number of hours from 1h to ${MAX_COMPLETION_HOURS}h, e.g. 24h`),
);

export const windowSeconds = (window: string) => Number(COMPLETION_WINDOW.exec(window)![1]) * 3600;

export const createBatchSchema = z.strictObject({
  input_file_id: z.string().check(z.minLength(1), z.maxLength(256)),
  endpoint: z.enum(BATCH_ENDPOINTS),
  completion_window: completionWindow,
  metadata: z.nullish(metadata),
  // OpenAI's newer field: when the output files expire. Accepted; the gateway's output files do not expire.
  output_expires_after: z.optional(
    z.strictObject({ anchor: z.literal("created_at"), seconds: int(z.gte(3600), z.lte(2_592_000)) }),
  ),
});

export const updateBatchSchema = z.strictObject({
  internal_output_file_id: z.string().check(z.minLength(1), z.maxLength(256)),
});

export const listBatchesQuery = z.looseObject({
  limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100)), 20),
  after: z.optional(z.string().check(z.maxLength(256))),
});
