import * as z from "zod";
import { BATCH_ENDPOINTS } from "./types.ts";

/** Spec 2.8: at most 16 pairs, keys of at most 64 characters, values of at most 512. */
const metadata = z
  .record(z.string().max(64, "metadata keys are at most 64 characters"), z.string().max(512, "at most 512 characters"))
  .refine((pairs) => Object.keys(pairs).length <= 16, "metadata holds at most 16 pairs");

/**
 * `completion_window`: OpenAI accepts only `24h`; the gateway also accepts any whole number of hours from 1 to
 * 168 (a week), so a gateway-run batch may be given longer. A native provider that supports only 24h refuses
 * other windows when the batch is submitted (the batch then fails).
 */
export const COMPLETION_WINDOW = /^([1-9]\d{0,2})h$/;
export const MAX_COMPLETION_HOURS = 168;

const completionWindow = z.string().refine((value) => {
  const match = COMPLETION_WINDOW.exec(value);
  return match !== null && Number(match[1]) <= MAX_COMPLETION_HOURS;
}, `must be a number of hours from 1h to ${MAX_COMPLETION_HOURS}h, e.g. 24h`);

export const windowSeconds = (window: string) => Number(COMPLETION_WINDOW.exec(window)![1]) * 3600;

export const createBatchSchema = z.strictObject({
  input_file_id: z.string().min(1).max(256),
  endpoint: z.enum(BATCH_ENDPOINTS),
  completion_window: completionWindow,
  metadata: metadata.nullish(),
  // OpenAI's newer field: when the output files expire. Accepted; the gateway's output files do not expire.
  output_expires_after: z
    .strictObject({ anchor: z.literal("created_at"), seconds: z.number().int().min(3600).max(2_592_000) })
    .optional(),
});
export type CreateBatchBody = z.infer<typeof createBatchSchema>;

export const updateBatchSchema = z.strictObject({ internal_output_file_id: z.string().min(1).max(256) });

export const listBatchesQuery = z.looseObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().max(256).optional(),
});

export const BATCH_MODE_VALUES = ["native", "gateway"] as const;
