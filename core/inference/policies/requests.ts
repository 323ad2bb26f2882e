import * as z from "zod";
import { Invalid } from "../../control/errors.ts";
import type { PolicyCondition, PolicyResource } from "./model.ts";

/**
 * Request bodies of the policy routes (core/routes/handlers/policies.ts) and of API keys' inline limits
 * (key-policies.ts): zod schemas and their translation into PolicyResource fields. Kept apart from model.ts,
 * which the policy enforcer (data plane) imports: zod schemas are built at import.
 */

const FIXED_KEYS = new Set(["api_key", "workspace_id", "user_id", "provider", "model"]);
const KEY_ALIASES: Record<string, string> = {
  api_key_id: "api_key",
  workspace: "workspace_id",
  user: "user_id",
};

/** A condition or group_by key in canonical form, or Invalid. */
export function canonicalKey(raw: string, param: string): string {
  const key = KEY_ALIASES[raw.trim()] ?? raw.trim();
  if (FIXED_KEYS.has(key)) return key;
  if (/^metadata\.[^.\s].{0,63}$/.test(key)) return key;
  throw new Invalid(`Unknown key '${raw}': use api_key, workspace_id, user_id, provider, model or metadata.<key>.`, {
    param,
    code: "invalid_policy_key",
  });
}

const text = z.string().min(1).max(512);
const values = z.union([text, z.array(text).min(1).max(100)]);
const conditionSchema = z.object({
  key: z.string().min(1).max(100),
  value: values,
  excludes: values.optional(),
});
const conditionsSchema = z.array(conditionSchema).max(20);
const groupBySchema = z.union([
  z.literal("none"),
  z.string().min(1).max(100),
  z.array(z.union([z.string().min(1).max(100), z.object({ key: z.string().min(1).max(100) })])).max(5),
]);

const asList = (value: string | string[]) => (Array.isArray(value) ? value : [value]);

export function parseConditions(raw: z.infer<typeof conditionsSchema>): PolicyCondition[] {
  return raw.map((condition, index) => ({
    key: canonicalKey(condition.key, `conditions[${index}].key`),
    value: asList(condition.value),
    ...(condition.excludes !== undefined ? { excludes: asList(condition.excludes) } : {}),
  }));
}

export function parseGroupBy(raw: z.infer<typeof groupBySchema>): string[] {
  const list = Array.isArray(raw) ? raw : [raw];
  const keys = list
    .map((entry) => (typeof entry === "string" ? entry : entry.key))
    .filter((key) => key !== "none")
    .map((key, index) => canonicalKey(key, `group_by[${index}]`));
  return [...new Set(keys)];
}

const common = {
  name: z.string().trim().min(1).max(255).optional(),
  description: z.string().max(2000).nullable().optional(),
  conditions: conditionsSchema.optional(),
  group_by: groupBySchema.optional(),
};

const unpricedSchema = z.enum(["deny", "allow", "estimate"]);
/** USD per million input and output tokens, for `unpriced: "estimate"`. */
const unpricedRateSchema = z.strictObject({
  input: z.number().finite().min(0).max(1_000_000),
  output: z.number().finite().min(0).max(1_000_000),
});

const resetSchema = z.enum(["none", "daily", "weekly", "monthly"]).nullable();
const unitSchema = z.enum(["rps", "rpm", "rph", "rpd"]);

export const usageCreateSchema = z.object({
  ...common,
  workspace_id: z.string().min(1).optional(),
  organisation_id: z.string().optional(),
  type: z.enum(["cost", "tokens", "requests"]),
  credit_limit: z.number().min(0),
  alert_threshold: z.number().min(0).nullable().optional(),
  periodic_reset: resetSchema.optional(),
  timezone: z.string().min(1).max(64).nullable().optional(),
  unpriced: unpricedSchema.optional(),
  unpriced_rate: unpricedRateSchema.nullable().optional(),
});

export const usageUpdateSchema = z.object({
  ...common,
  type: z.enum(["cost", "tokens", "requests"]).optional(),
  credit_limit: z.number().min(0).optional(),
  alert_threshold: z.number().min(0).nullable().optional(),
  periodic_reset: resetSchema.optional(),
  timezone: z.string().min(1).max(64).nullable().optional(),
  unpriced: unpricedSchema.optional(),
  unpriced_rate: unpricedRateSchema.nullable().optional(),
});

export const rateCreateSchema = z.object({
  ...common,
  workspace_id: z.string().min(1).optional(),
  organisation_id: z.string().optional(),
  type: z.enum(["requests", "tokens"]).default("requests"),
  unit: unitSchema,
  value: z.number().int().min(0),
});

export const rateUpdateSchema = z.object({
  ...common,
  type: z.enum(["requests", "tokens"]).optional(),
  unit: unitSchema.optional(),
  value: z.number().int().min(0).optional(),
});

export type UsageCreate = z.infer<typeof usageCreateSchema>;
export type UsageUpdate = z.infer<typeof usageUpdateSchema>;
export type RateCreate = z.infer<typeof rateCreateSchema>;
export type RateUpdate = z.infer<typeof rateUpdateSchema>;

export function checkTimezone(timezone: string | undefined): string | undefined {
  if (timezone === undefined || timezone === "UTC") return undefined;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return timezone;
  } catch {
    throw new Invalid(`Unknown time zone '${timezone}' (use an IANA name such as Europe/Paris).`, {
      param: "timezone",
    });
  }
}

export function checkAlert(policy: Pick<PolicyResource, "alertThreshold" | "creditLimit">): void {
  if (policy.alertThreshold !== undefined && policy.alertThreshold > (policy.creditLimit ?? 0))
    throw new Invalid("'alert_threshold' must not exceed 'credit_limit'.", {
      param: "alert_threshold",
      code: "invalid_value",
    });
}

/** `unpriced` is a cost limit's; `estimate` needs the rate to estimate at. */
export function checkUnpriced(policy: Partial<Pick<PolicyResource, "type" | "unpriced" | "unpricedRate">>): void {
  if ((policy.unpriced !== undefined || policy.unpricedRate !== undefined) && policy.type !== "cost")
    throw new Invalid("'unpriced' and 'unpriced_rate' apply to usage limits of type 'cost' only.", {
      param: "unpriced",
      code: "invalid_value",
    });
  if (policy.unpriced === "estimate" && !policy.unpricedRate)
    throw new Invalid(
      "'unpriced: \"estimate\"' needs 'unpriced_rate' ({input, output} in USD per million tokens) to estimate at.",
      { param: "unpriced_rate", code: "invalid_value" },
    );
}

/** Fields both policy kinds share; `type` may be set on create but never changed. */
function commonFields(
  body: UsageCreate | UsageUpdate | RateCreate | RateUpdate,
  current?: PolicyResource,
): Partial<PolicyResource> {
  const fields: Partial<PolicyResource> = {};
  if (body.type !== undefined) {
    if (current && current.type !== body.type)
      throw new Invalid("A policy's 'type' cannot change; create a new policy.", {
        param: "type",
        code: "immutable_field",
      });
    fields.type = body.type;
  }
  if (body.name !== undefined) fields.name = body.name;
  if (body.description !== undefined) fields.description = body.description ?? undefined;
  if (body.conditions !== undefined) fields.conditions = parseConditions(body.conditions);
  if (body.group_by !== undefined) fields.groupBy = parseGroupBy(body.group_by);
  return fields;
}

/** Usage-limit fields of a create (or of an update over `current`). */
export function usageFields(body: UsageCreate | UsageUpdate, current?: PolicyResource): Partial<PolicyResource> {
  const fields = commonFields(body, current);
  if (body.credit_limit !== undefined) fields.creditLimit = body.credit_limit;
  if (body.alert_threshold !== undefined) fields.alertThreshold = body.alert_threshold ?? undefined;
  if (body.periodic_reset !== undefined) fields.periodicReset = body.periodic_reset ?? "none";
  if (body.timezone !== undefined) fields.timezone = checkTimezone(body.timezone ?? undefined);
  if (body.unpriced !== undefined) fields.unpriced = body.unpriced;
  if (body.unpriced_rate !== undefined) fields.unpricedRate = body.unpriced_rate ?? undefined;
  checkAlert({ ...current, ...fields });
  checkUnpriced({ ...current, ...fields });
  return fields;
}

export function rateFields(body: RateCreate | RateUpdate, current?: PolicyResource): Partial<PolicyResource> {
  const fields = commonFields(body, current);
  if (body.unit !== undefined) fields.unit = body.unit;
  if (body.value !== undefined) fields.value = body.value;
  return fields;
}
