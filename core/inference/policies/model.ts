import { type Resource, ResourceStore } from "../../control/resource-store.ts";
import type { Records } from "../../store/ports.ts";
import { type Window, calendarWindow, fixedWindow } from "./windows.ts";

/**
 * Usage-limit and rate-limit policies (spec 2.11, 3, 8; Portkey's `/policies/usage-limits` and
 * `/policies/rate-limits` JSON): which requests a policy covers (`conditions`), how it buckets them
 * (`group_by`), and what it caps. Stored with the ResourceStore (one kind per family); enforced by
 * core/inference/policies/enforcer.ts from an in-memory cache. Request bodies are parsed in requests.ts: the enforcer
 * (data plane) imports this module and must not build the admin API's zod schemas.
 */

export type PolicyFamily = "usage_limits" | "rate_limits";
export type UsageType = "cost" | "tokens" | "requests";
export type PeriodicReset = "none" | "daily" | "weekly" | "monthly";
export type RateUnit = "rps" | "rpm" | "rph" | "rpd";
/**
 * What a `cost` usage limit does with a request whose model has no known price: refuse it (default: it would
 * otherwise pass as $0), admit it uncounted, or count it at a stated fallback rate.
 */
export type UnpricedMode = "deny" | "allow" | "estimate";

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
  /** Cost limits: requests whose model has no price (default `deny`). */
  unpriced?: UnpricedMode;
  /** With `unpriced: "estimate"`: USD per million input and output tokens. */
  unpricedRate?: { input: number; output: number };
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
    ...(policy.type === "cost"
      ? { unpriced: policy.unpriced ?? "deny", unpriced_rate: policy.unpricedRate ?? null }
      : {}),
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
  group(subject: PolicySubject): PolicyGroup;
  window(nowMs: number): Window;
  /** The counter of a group in the window starting at `windowStart` (counterKeyOf, remembered per group). */
  counterKey(group: PolicyGroup, windowStart: number): string;
  /** Counter units -> the policy's unit (USD for cost). */
  toUnits(value: number): number;
  /** Amount to count for a finished request (or to reserve for one about to start). */
  amountOf(usage: CountedUsage): number;
  /** Cost policies: what the policy does with a request whose model has no price. */
  unpriced: UnpricedMode;
  describe(): string;
}

/** What a request used (or is estimated to use), as the policies count it. */
export interface CountedUsage {
  tokens?: number;
  costUsd?: number;
  /** False when the request's model has no price: `costUsd` is then unknown (not 0). */
  priced?: boolean;
  promptTokens?: number;
  completionTokens?: number;
}

/** The requests a policy counts together (`groupBy`): `key` names them in counter keys. */
export interface PolicyGroup {
  key: string;
  values: Record<string, string | null>;
}

export const MICRO = 1_000_000;

/** Groups remembered per policy (by their one `groupBy` value); past this many, the memory starts over. */
const MAX_REMEMBERED_GROUPS = 10_000;
const MAX_REMEMBERED_VALUE_CHARS = 128;

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
  const groupOf = (subject: PolicySubject): PolicyGroup => {
    const values: Record<string, string | null> = {};
    const parts: string[] = [];
    for (const key of policy.groupBy) {
      const value = subjectValue(subject, key);
      values[key] = value ?? null;
      parts.push(`${key}=${value === undefined ? "" : encodeURIComponent(value)}`);
    }
    return { key: parts.join("&"), values };
  };
  // Every request of a policy grouped by one value (an API key, a user) asks for the same few groups: they are
  // built once, and so is each group's counter key in the current window (no strings to build and hash anew).
  const allRequests: PolicyGroup = { key: "all", values: {} };
  const groupKey = policy.groupBy.length === 1 ? policy.groupBy[0]! : undefined;
  const groups = new Map<string | undefined, PolicyGroup>();
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
      if (policy.groupBy.length === 0) return allRequests;
      if (groupKey === undefined) return groupOf(subject);
      const value = subjectValue(subject, groupKey);
      // Ids are short; a long metadata value is built each time rather than kept (the memory stays small).
      if (value !== undefined && value.length > MAX_REMEMBERED_VALUE_CHARS) return groupOf(subject);
      let group = groups.get(value);
      if (!group) {
        if (groups.size >= MAX_REMEMBERED_GROUPS) groups.clear();
        group = groupOf(subject);
        groups.set(value, group);
      }
      return group;
    },
    counterKey(group, windowStart) {
      const remembered = group as PolicyGroup & { counter?: { start: number; key: string } };
      if (remembered.counter?.start === windowStart) return remembered.counter.key;
      const key = counterKeyOf(policy.id, group.key, windowStart);
      remembered.counter = { start: windowStart, key };
      return key;
    },
    window(nowMs) {
      if (cached && nowMs >= cached.start * 1000 && (cached.end === undefined || nowMs < cached.end * 1000))
        return cached;
      cached = computeWindow(nowMs);
      return cached;
    },
    toUnits: (value) => (isCost ? value / MICRO : value),
    amountOf(usage) {
      if (!isCost) return usage.tokens ?? 0;
      if (usage.priced === false) {
        // Unpriced: nothing to count, unless the policy states a fallback rate to count it at.
        const rate = policy.unpriced === "estimate" ? policy.unpricedRate : undefined;
        if (!rate) return 0;
        const usd = ((usage.promptTokens ?? 0) * rate.input + (usage.completionTokens ?? 0) * rate.output) / MICRO;
        return Math.round(usd * MICRO);
      }
      return usage.costUsd === undefined ? 0 : Math.round(usage.costUsd * MICRO);
    },
    unpriced: isCost ? (policy.unpriced ?? "deny") : "allow",
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
