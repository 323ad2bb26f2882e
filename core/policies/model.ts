import * as z from "zod";
import { type Resource, ResourceStore } from "../control/resource-store.ts";
import { badRequest } from "../http/errors.ts";
import type { Records } from "../store/ports.ts";
import { type Window, calendarWindow, fixedWindow } from "./windows.ts";

/**
 * Usage-limit and rate-limit policies (spec 2.11, 3, 8; Portkey's `/policies/usage-limits` and
 * `/policies/rate-limits` JSON): which requests a policy covers (`conditions`), how it buckets them
 * (`group_by`), and what it caps. Stored with the ResourceStore (one kind per family); enforced by
 * core/policies/enforcer.ts from an in-memory cache.
 */

export type PolicyFamily = "usage_limits" | "rate_limits";
export type UsageType = "cost" | "tokens" | "requests";
export type RateType = "requests" | "tokens";
export type PeriodicReset = "none" | "daily" | "weekly" | "monthly";
export type RateUnit = "rps" | "rpm" | "rph" | "rpd";

export interface PolicyCondition {
  /** `api_key`, `workspace_id`, `user_id`, `provider`, `model` or `metadata.<key>`. */
  key: string;
  /** Value(s) to match (OR); `*` matches any present value. */
  value: string[];
  /** Values that never match. */
  excludes?: string[];
}

export interface PolicyResource extends Resource {
  family: PolicyFamily;
  name?: string;
  description?: string;
  conditions: PolicyCondition[];
  /** Condition keys whose values make up a group (empty: one group for every matching request). */
  groupBy: string[];
  type: UsageType;
  /** Usage limits: the cap in the type's unit (USD for cost). */
  creditLimit?: number;
  alertThreshold?: number;
  periodicReset?: PeriodicReset;
  /** IANA time zone of calendar resets (default UTC). */
  timezone?: string;
  /** Rate limits: `value` requests (or tokens) per `unit`. */
  unit?: RateUnit;
  value?: number;
  /** Set on policies created through an API key's `usage_limits` / `rate_limits`. */
  apiKeyId?: string;
  status: "active";
  createdBy?: string;
}

export const usagePolicyStore = (records: Records) =>
  new ResourceStore<PolicyResource>(records, "USAGE_LIMIT_POLICY", "pul");
export const ratePolicyStore = (records: Records) =>
  new ResourceStore<PolicyResource>(records, "RATE_LIMIT_POLICY", "prl");
export const policyStore = (records: Records, family: PolicyFamily) =>
  family === "usage_limits" ? usagePolicyStore(records) : ratePolicyStore(records);

// ---------------------------------------------------------------------------------------------------------
// Request bodies

const FIXED_KEYS = new Set(["api_key", "workspace_id", "user_id", "provider", "model"]);
const KEY_ALIASES: Record<string, string> = {
  api_key_id: "api_key",
  workspace: "workspace_id",
  user: "user_id",
};

/** A condition or group_by key in canonical form, or a 400. */
export function canonicalKey(raw: string, param: string): string {
  const key = KEY_ALIASES[raw.trim()] ?? raw.trim();
  if (FIXED_KEYS.has(key)) return key;
  if (/^metadata\.[^.\s].{0,63}$/.test(key)) return key;
  throw badRequest(
    `Unknown key '${raw}': use api_key, workspace_id, user_id, provider, model or metadata.<key>.`,
    param,
    "invalid_policy_key",
  );
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
});

export const usageUpdateSchema = z.object({
  ...common,
  type: z.enum(["cost", "tokens", "requests"]).optional(),
  credit_limit: z.number().min(0).optional(),
  alert_threshold: z.number().min(0).nullable().optional(),
  periodic_reset: resetSchema.optional(),
  timezone: z.string().min(1).max(64).nullable().optional(),
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
    throw badRequest(`Unknown time zone '${timezone}' (use an IANA name such as Europe/Paris).`, "timezone");
  }
}

export function checkAlert(policy: Pick<PolicyResource, "alertThreshold" | "creditLimit">): void {
  if (policy.alertThreshold !== undefined && policy.alertThreshold > (policy.creditLimit ?? 0))
    throw badRequest("'alert_threshold' must not exceed 'credit_limit'.", "alert_threshold", "invalid_value");
}

/** Fields both policy kinds share; `type` may be set on create but never changed. */
function commonFields(
  body: UsageCreate | UsageUpdate | RateCreate | RateUpdate,
  current?: PolicyResource,
): Partial<PolicyResource> {
  const fields: Partial<PolicyResource> = {};
  if (body.type !== undefined) {
    if (current && current.type !== body.type)
      throw badRequest("A policy's 'type' cannot change; create a new policy.", "type", "immutable_field");
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
  checkAlert({ ...current, ...fields });
  return fields;
}

export function rateFields(body: RateCreate | RateUpdate, current?: PolicyResource): Partial<PolicyResource> {
  const fields = commonFields(body, current);
  if (body.unit !== undefined) fields.unit = body.unit;
  if (body.value !== undefined) fields.value = body.value;
  return fields;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** The public shape (Portkey's policy objects). */
export function presentPolicy(policy: PolicyResource) {
  const base = {
    id: policy.id,
    object: policy.family === "usage_limits" ? "policy_usage_limits" : "policy_rate_limits",
    name: policy.name ?? null,
    description: policy.description ?? null,
    organisation_id: policy.organisationId,
    workspace_id: policy.workspaceId ?? null,
    conditions: policy.conditions.map((condition) => ({
      key: condition.key,
      value: condition.value.length === 1 ? condition.value[0] : condition.value,
      ...(condition.excludes ? { excludes: condition.excludes } : {}),
    })),
    group_by: policy.groupBy.map((key) => ({ key })),
    type: policy.type,
  };
  const tail = {
    api_key_id: policy.apiKeyId ?? null,
    status: policy.status,
    version: policy.version,
    created_at: iso(policy.createdAt),
    last_updated_at: iso(policy.updatedAt),
  };
  if (policy.family === "rate_limits") return { ...base, unit: policy.unit, value: policy.value, ...tail };
  return {
    ...base,
    credit_limit: policy.creditLimit,
    alert_threshold: policy.alertThreshold ?? null,
    periodic_reset: policy.periodicReset === "none" ? null : (policy.periodicReset ?? null),
    timezone: policy.timezone ?? "UTC",
    ...tail,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Compiled form, for the hot path

/** What a request is, as far as policies care. */
export interface PolicySubject {
  organisationId: string;
  workspaceId?: string;
  apiKeyId?: string;
  userId?: string;
  metadata?: Record<string, string>;
  provider?: string;
  /** The model the request asked for (spec 8: never the answering model). */
  model?: string;
}

export function subjectValue(subject: PolicySubject, key: string): string | undefined {
  switch (key) {
    case "api_key":
      return subject.apiKeyId;
    case "workspace_id":
      return subject.workspaceId;
    case "user_id":
      return subject.userId;
    case "provider":
      return subject.provider;
    case "model":
      return subject.model;
    default:
      return subject.metadata?.[key.slice("metadata.".length)];
  }
}

const RATE_SECONDS: Record<RateUnit, number> = { rps: 1, rpm: 60, rph: 3600, rpd: 86_400 };
const RATE_WORDS: Record<RateUnit, string> = { rps: "second", rpm: "minute", rph: "hour", rpd: "day" };
const RESET_WORDS: Record<PeriodicReset, string> = { none: "", daily: "day", weekly: "week", monthly: "month" };

export interface CompiledPolicy {
  policy: PolicyResource;
  /** `admission`: counted by a conditional add before the call (requests); `usage`: checked before, counted after. */
  counting: "admission" | "usage";
  /** The cap in counter units (integer micro-dollars for cost). */
  limit: number;
  matches(subject: PolicySubject): boolean;
  group(subject: PolicySubject): { key: string; values: Record<string, string | null> };
  window(nowMs: number): Window;
  /** Counter units -> the policy's unit (USD for cost). */
  toUnits(value: number): number;
  /** Amount to count for a finished request. */
  amountOf(usage: { tokens?: number; costUsd?: number }): number;
  describe(): string;
}

export const MICRO = 1_000_000;

export function compilePolicy(policy: PolicyResource): CompiledPolicy {
  const isRate = policy.family === "rate_limits";
  const isCost = policy.type === "cost";
  const limit = isRate
    ? (policy.value ?? 0)
    : isCost
      ? Math.round((policy.creditLimit ?? 0) * MICRO)
      : (policy.creditLimit ?? 0);
  const conditions = policy.conditions.map((condition) => ({
    key: condition.key,
    any: condition.value.includes("*"),
    values: new Set(condition.value),
    excludes: condition.excludes ? new Set(condition.excludes) : undefined,
  }));
  let cached: Window | undefined;
  const computeWindow = (nowMs: number): Window => {
    if (isRate) return fixedWindow(nowMs, RATE_SECONDS[policy.unit ?? "rpm"]);
    const reset = policy.periodicReset ?? "none";
    if (reset === "none") return { start: 0, end: undefined };
    return calendarWindow(nowMs, reset, policy.timezone);
  };
  return {
    policy,
    counting: policy.type === "requests" ? "admission" : "usage",
    limit,
    matches(subject) {
      if (subject.organisationId !== policy.organisationId) return false;
      if (policy.workspaceId && subject.workspaceId !== policy.workspaceId) return false;
      for (const condition of conditions) {
        const actual = subjectValue(subject, condition.key);
        if (actual !== undefined && condition.excludes?.has(actual)) return false;
        if (condition.any) {
          if (actual === undefined) return false;
        } else if (actual === undefined || !condition.values.has(actual)) return false;
      }
      return true;
    },
    group(subject) {
      if (policy.groupBy.length === 0) return { key: "all", values: {} };
      const values: Record<string, string | null> = {};
      const parts: string[] = [];
      for (const key of policy.groupBy) {
        const value = subjectValue(subject, key);
        values[key] = value ?? null;
        parts.push(`${key}=${value === undefined ? "" : encodeURIComponent(value)}`);
      }
      return { key: parts.join("&"), values };
    },
    window(nowMs) {
      if (cached && nowMs >= cached.start * 1000 && (cached.end === undefined || nowMs < cached.end * 1000))
        return cached;
      cached = computeWindow(nowMs);
      return cached;
    },
    toUnits: (value) => (isCost ? value / MICRO : value),
    amountOf(usage) {
      if (isCost) return usage.costUsd === undefined ? 0 : Math.round(usage.costUsd * MICRO);
      return usage.tokens ?? 0;
    },
    describe() {
      const label = policy.name ? `'${policy.name}' (${policy.id})` : `'${policy.id}'`;
      if (isRate) return `policy ${label} allows ${limit} ${policy.type} per ${RATE_WORDS[policy.unit ?? "rpm"]}`;
      const cap = isCost ? `$${(limit / MICRO).toFixed(2)} of cost` : `${limit} ${policy.type}`;
      const reset = policy.periodicReset ?? "none";
      return `policy ${label} caps usage at ${cap}${reset === "none" ? "" : ` per ${RESET_WORDS[reset]}`}`;
    },
  };
}

/** Counter key of one group in one window. */
export const counterKeyOf = (policyId: string, group: string, windowStart: number) =>
  `POL#${policyId}#${group}#${windowStart}`;

/** Records of the groups seen in one window (pk), one item per group (sk `G#<group>`). */
export const groupIndexPk = (policyId: string, windowStart: number) => `POLUSE#${policyId}#${windowStart}`;
