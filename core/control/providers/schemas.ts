import * as z from "zod";
import { slugSchema } from "../credentials/schemas.ts";

/**
 * Bodies of `/v1/providers` (the `portkey-ai` SDK's ProvidersCreateParams / ProvidersUpdateParams). Limits are
 * policies here (`/v2/policies/usage-limits` and `/rate-limits` with a `provider` condition): a body that sets
 * `usage_limits` or `rate_limits` is refused rather than stored unenforced.
 */
const notHere = (field: string) =>
  z
    .unknown()
    .optional()
    .refine((value) => value === undefined || value === null, {
      message: `set ${field} with a policy (/v2/policies/${field === "usage_limits" ? "usage-limits" : "rate-limits"}) whose conditions name this provider`,
    });

const expiresAt = z.iso.datetime({ offset: true }).nullable();

export const providerCreateSchema = z.strictObject({
  name: z.string().trim().min(1).max(256),
  integration_id: z.string().trim().min(1).max(256),
  workspace_id: z.string().optional(),
  slug: slugSchema.optional(),
  note: z.string().max(4096).nullable().optional(),
  expires_at: expiresAt.optional(),
  usage_limits: notHere("usage_limits"),
  rate_limits: notHere("rate_limits"),
});

export const providerUpdateSchema = z.strictObject({
  workspace_id: z.string().optional(),
  name: z.string().trim().min(1).max(256).optional(),
  note: z.string().max(4096).nullable().optional(),
  expires_at: expiresAt.optional(),
  usage_limits: notHere("usage_limits"),
  rate_limits: notHere("rate_limits"),
  reset_usage: z.boolean().optional(),
});
