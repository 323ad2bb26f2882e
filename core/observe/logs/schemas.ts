import * as z from "zod";

const metadata = z
  .record(z.string().max(64), z.string().max(512))
  .refine((value) => Object.keys(value).length <= 16, "at most 16 metadata pairs");

/** POST /v1/logs: a log for a request that did not pass through the gateway. */
export const customLogRequest = z.strictObject({
  request: z.looseObject({
    url: z.string().max(8192).optional(),
    method: z.string().max(16).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.unknown().optional(),
    // Counted by analytics and kept in its keys: bounded like the inference routes' model names.
    provider: z.string().max(128).optional(),
  }),
  response: z
    .looseObject({
      status: z.number().int().min(100).max(599).optional(),
      headers: z.record(z.string(), z.string()).optional(),
      body: z.unknown().optional(),
      response_time: z.number().min(0).optional(),
    })
    .optional(),
  metadata: metadata.optional(),
  trace_id: z.string().max(128).optional(),
  span_id: z.string().max(128).optional(),
  workspace_id: z.string().max(128).optional(),
});

const number = z.coerce.number();

export const listLogsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().optional(),
  after: z.string().optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  workspace_id: z.string().optional(),
  status: z.coerce.number().int().min(100).max(599).optional(),
  provider: z.string().optional(),
  model: z.string().optional(),
  trace_id: z.string().optional(),
  metadata_key: z.string().optional(),
  metadata_value: z.string().optional(),
  min_cost: number.min(0).optional(),
  max_cost: number.min(0).optional(),
  /** `false`: the requests no price source (nor an override) could price. */
  priced: z.enum(["true", "false"]).optional(),
  api_key_id: z.string().optional(),
  user_id: z.string().optional(),
});
