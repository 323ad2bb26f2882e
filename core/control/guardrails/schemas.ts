import * as z from "zod";
import { MAX_CHECK_TIMEOUT_MS } from "../../inference/guardrails/types.ts";
import { slugSchema } from "../credentials/schemas.ts";

/**
 * Request bodies of the saved-guardrail routes (core/routes/handlers/guardrails.ts), in the shape the portkey-ai
 * SDK sends (`name`, `workspace_id`, `organisation_id`, `checks[]`, `actions`) plus `slug` and our actions.
 * A check's `parameters` are validated by the check itself (core/inference/guardrails/checks/registry.ts), in the service.
 */

export const MAX_CHECKS = 50;

const checkSchema = z.strictObject({
  id: z.string().trim().min(1).max(100),
  parameters: z.record(z.string(), z.unknown()).default({}),
  name: z.string().trim().max(255).optional(),
  is_enabled: z.boolean().default(true),
});

/** Written to the trace's feedback (core/observe/feedback has the same ranges). */
const feedbackSchema = z.strictObject({
  value: z.number().int().min(-10).max(10),
  weight: z.number().min(0).max(1).default(1),
  metadata: z.string().max(512).optional(),
});

/** `on_success` / `on_fail`; `null` (on update) removes it. */
const outcomeSchema = z.strictObject({ feedback: feedbackSchema.optional() }).nullable();

/**
 * Every field optional: the service fills defaults on create and keeps the stored values on update, then
 * checks the combination (an async guardrail cannot deny).
 */
const actionsSchema = z.strictObject({
  deny: z.boolean().optional(),
  async: z.boolean().optional(),
  soft_deny_200: z.boolean().optional(),
  on_error: z.enum(["open", "closed"]).optional(),
  timeout_ms: z.number().int().min(1).max(MAX_CHECK_TIMEOUT_MS).optional(),
  on_success: outcomeSchema.optional(),
  on_fail: outcomeSchema.optional(),
});

const checksSchema = z.array(checkSchema).min(1).max(MAX_CHECKS);
const name = z.string().trim().min(1).max(255);
const reference = z.string().trim().min(1).max(200);

export const guardrailCreateSchema = z.strictObject({
  name,
  slug: slugSchema.optional(),
  /** A workspace's guardrail (id or slug); without it, and with `organisation_id`, an organisation-level one. */
  workspace_id: reference.optional(),
  organisation_id: reference.optional(),
  checks: checksSchema,
  actions: actionsSchema.optional(),
});

export const guardrailUpdateSchema = z.strictObject({
  name: name.optional(),
  slug: slugSchema.optional(),
  checks: checksSchema.optional(),
  actions: actionsSchema.optional(),
  /** Accepted as the SDK sends them; they must name where the guardrail already is (it cannot move). */
  workspace_id: reference.optional(),
  organisation_id: reference.optional(),
});

export type GuardrailCreateInput = z.infer<typeof guardrailCreateSchema>;
export type GuardrailUpdateInput = z.infer<typeof guardrailUpdateSchema>;
export type GuardrailActionsInput = z.infer<typeof actionsSchema>;
