import * as z from "zod";
import type { Principal } from "../../auth/principal.ts";
import { validate } from "../../http/json.ts";
import type { Records } from "../../store/ports.ts";
import { type PolicyFamily, type PolicyResource, policyStore } from "./model.ts";
import { checkAlert, checkTimezone } from "./requests.ts";

/**
 * Budgets and rate limits set on an API key (`usage_limits`, `rate_limits` on key create and update) are
 * ordinary policies conditioned on that key (`api_key_id` set, so they are listed with the other policies).
 * An update changes the key's policies in place (same ids, so consumption so far is kept), creates extra ones,
 * and deletes those no longer given; `null` or `[]` removes them all.
 */

const usageLimit = z.object({
  type: z.enum(["cost", "tokens", "requests"]).default("cost"),
  credit_limit: z.number().min(0),
  alert_threshold: z.number().min(0).nullable().optional(),
  periodic_reset: z.enum(["none", "daily", "weekly", "monthly"]).nullable().optional(),
  timezone: z.string().min(1).max(64).nullable().optional(),
});
const rateLimit = z.object({
  type: z.enum(["requests", "tokens"]).default("requests"),
  unit: z.enum(["rps", "rpm", "rph", "rpd"]),
  value: z.number().int().min(0),
});
const oneOrMany = <T extends z.ZodType>(schema: T) =>
  z
    .union([schema, z.array(schema).max(10)])
    .nullable()
    .optional();
const keyLimitsSchema = z.looseObject({ usage_limits: oneOrMany(usageLimit), rate_limits: oneOrMany(rateLimit) });

type Fields = Omit<PolicyResource, "id" | "organisationId" | "version" | "createdAt" | "updatedAt">;

/** Validated limits of a key body (undefined entries: not given, leave as they are). */
export interface KeyLimits {
  usage_limits?: Fields[];
  rate_limits?: Fields[];
}

const list = <T>(value: T | T[] | null | undefined): T[] | undefined =>
  value === undefined ? undefined : value === null ? [] : Array.isArray(value) ? value : [value];

/** Validates `usage_limits` / `rate_limits` of a key create or update body (400 before anything is written). */
export function parseKeyLimits(body: unknown): KeyLimits {
  const parsed = validate(keyLimitsSchema, body);
  const out: KeyLimits = {};
  const usage = list(parsed.usage_limits);
  if (usage) {
    out.usage_limits = usage.map((limit) => {
      const fields: Fields = {
        family: "usage_limits",
        conditions: [],
        groupBy: ["api_key"],
        type: limit.type,
        creditLimit: limit.credit_limit,
        alertThreshold: limit.alert_threshold ?? undefined,
        periodicReset: limit.periodic_reset ?? "none",
        timezone: checkTimezone(limit.timezone ?? undefined),
        status: "active",
      };
      checkAlert(fields);
      return fields;
    });
  }
  const rate = list(parsed.rate_limits);
  if (rate) {
    out.rate_limits = rate.map((limit) => ({
      family: "rate_limits",
      conditions: [],
      groupBy: ["api_key"],
      type: limit.type,
      unit: limit.unit,
      value: limit.value,
      status: "active",
    }));
  }
  return out;
}

/** Creates, updates or deletes the policies of one key so that they are `limits` (`by` made the change). */
export async function applyKeyLimits(
  deps: {
    records: Records;
    /** Tells the enforcer (core/inference/policies/enforcer.ts) that a policy changed or went. */
    policyChanged(organisationId: string, policy: PolicyResource | undefined, removedId?: string): void;
  },
  by: Principal,
  key: { id: string; organisationId: string; workspaceId?: string },
  limits: KeyLimits,
): Promise<void> {
  for (const family of ["usage_limits", "rate_limits"] as PolicyFamily[]) {
    const wanted = limits[family];
    if (!wanted) continue;
    const store = policyStore(deps.records, family);
    const existing: PolicyResource[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.list(key.organisationId, {
        limit: 100,
        cursor,
        filter: (policy) => policy.apiKeyId === key.id,
      });
      existing.push(...page.items);
      cursor = page.cursor;
    } while (cursor);
    existing.reverse(); // oldest first, so the n-th limit given keeps the n-th policy
    for (const [index, fields] of wanted.entries()) {
      const complete: Fields = {
        ...fields,
        name: `${family === "usage_limits" ? "Usage limit" : "Rate limit"} of API key ${key.id}`,
        workspaceId: key.workspaceId,
        conditions: [{ key: "api_key", value: [key.id] }],
        apiKeyId: key.id,
        createdBy: by.keyId ?? by.userId,
      };
      const current = existing[index];
      const saved =
        current && current.type === complete.type
          ? await store.update(current, complete)
          : await store.create(key.organisationId, complete);
      if (current && current.type !== complete.type) {
        await store.delete(current);
        deps.policyChanged(key.organisationId, undefined, current.id);
      }
      deps.policyChanged(key.organisationId, saved);
    }
    for (const stale of existing.slice(wanted.length)) {
      await store.delete(stale);
      deps.policyChanged(key.organisationId, undefined, stale.id);
    }
  }
}
