import * as z from "zod";
import { type Resource, ResourceStore } from "../../control/resource-store.ts";
import type { Records } from "../../store/ports.ts";

/**
 * Feedback on a traced request: ResourceStore kind FEEDBACK (`fb_...` ids), listed per organisation.
 * `value` is an integer from -10 to 10, `weight` 0..1 (default 1); counted into analytics (feedback graph).
 */
export interface Feedback extends Resource {
  traceId: string;
  value: number;
  weight: number;
  metadata: Record<string, string> | null;
  createdBy?: { keyId?: string; userId?: string };
}

export const feedbackStore = (records: Records) => new ResourceStore<Feedback>(records, "FEEDBACK", "fb");

/** Spec 2.8: at most 16 pairs, keys up to 64 characters, values up to 512. */
const metadata = z
  .record(z.string().max(64), z.string().max(512))
  .refine((value) => Object.keys(value).length <= 16, "at most 16 metadata pairs");

const value = z.number().int().min(-10).max(10);
const weight = z.number().min(0).max(1);

export const createFeedbackSchema = z.strictObject({
  trace_id: z.string().min(1).max(256),
  value,
  weight: weight.default(1),
  metadata: metadata.nullable().optional(),
});

export const updateFeedbackSchema = z
  .strictObject({ value: value.optional(), weight: weight.optional(), metadata: metadata.nullable().optional() })
  .refine((body) => Object.keys(body).length > 0, "nothing to update");

export function presentFeedback(feedback: Feedback) {
  return {
    id: feedback.id,
    object: "feedback",
    trace_id: feedback.traceId,
    value: feedback.value,
    weight: feedback.weight,
    metadata: feedback.metadata,
    workspace_id: feedback.workspaceId ?? null,
    created_at: feedback.createdAt,
    updated_at: feedback.updatedAt,
  };
}
