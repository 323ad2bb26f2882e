import type { RequestContext } from "../http/context.ts";
import { HttpError } from "../http/errors.ts";
import type { Counters, Records } from "../store/ports.ts";
import { TtlCache } from "../util/ttl-cache.ts";
import {
  type CompiledPolicy,
  type PolicyResource,
  type PolicySubject,
  compilePolicy,
  groupIndexPk,
  ratePolicyStore,
  usagePolicyStore,
} from "./model.ts";

/**
 * Enforces usage-limit and rate-limit policies through the Counters port (pipeline step 3).
 *
 * Per request, for the policies whose conditions match:
 * - `requests` policies (usage or rate): one conditional add per policy, `add(key, 1, {ceiling: limit})`, so
 *   concurrent requests never overshoot; a refusal rolls back the adds of the other policies of that request.
 * - `tokens` and `cost` policies: one read (getMany over all of them) before the call refuses groups already at
 *   their limit; the real usage is added after the answer (a stream when it ends), off the critical path.
 *   A few requests already in flight when a group reaches its limit can take it past the limit.
 * The limit compared is always the policy's current one (nothing caches an "exhausted" verdict), so raising
 * `credit_limit` re-enables exhausted groups at once (spec 3).
 *
 * Policies are cached per organisation and refreshed in the background every `refreshMs` (so requests never
 * wait for a refresh once warm: zero store reads for the policies themselves); changes made through this
 * process apply at once (`changed`).
 *
 * `admit` is the reusable check (MCP tool calls and any other caller); `admitRequest` is the inference
 * pipeline's wrapper, memoised per request so fallbacks and retries are admitted once.
 */

export interface Admission {
  /** x-ratelimit-* headers of the tightest requests rate limit (empty when none matched). */
  headers: Record<string, string>;
  /** True when tokens or cost policies matched: call `settle` with the real usage once known. */
  needsUsage: boolean;
  /** Counts real usage against the tokens and cost policies. Never throws (failures are logged). */
  settle(usage: { tokens?: number; costUsd?: number }): Promise<void>;
  /** Background writes (the usage index of first-seen groups): hand to waitUntil. */
  background?: Promise<void>;
}

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const EMPTY: Admission = Object.freeze({
  headers: NO_HEADERS,
  needsUsage: false,
  settle: () => Promise.resolve(),
});

/** Counters outlive their window by this much (clock skew between processes). */
const EXPIRY_MARGIN_SECONDS = 300;

interface OrgEntry {
  policies: CompiledPolicy[];
  loadedAt: number;
  generation: number;
  refreshing?: Promise<void>;
}

interface Counted {
  compiled: CompiledPolicy;
  key: string;
  group: { key: string; values: Record<string, string | null> };
  start: number;
  end: number | undefined;
}

/** A request context with what enforcers keep on it (see PolicyEnforcer's #kept). */
type WithAdmission = RequestContext & {
  [enforcer: symbol]: { pending: Promise<Admission>; admitted?: Admission } | undefined;
};

export class PolicyEnforcer {
  readonly #records: Records;
  readonly #counters: Counters;
  readonly #refreshMs: number;
  readonly #now: () => number;
  /** Per organisation; refreshed in the background, so entries do not expire, only fall out when many. */
  readonly #cache = new TtlCache<string, OrgEntry>({
    ttlMs: Infinity,
    maxEntries: 10_000,
    sizeOf: (organisationId, entry) => 512 + organisationId.length * 2 + entry.policies.length * 2048,
  });
  readonly #loading = new Map<string, Promise<OrgEntry>>();
  /**
   * Where a request's admission is kept: on its context, under this enforcer's own symbol (a WeakMap entry
   * per request costs more, in the insert and in every young-generation GC that must visit its table).
   */
  readonly #kept = Symbol("admission");

  constructor(records: Records, counters: Counters, options: { refreshMs?: number; now?: () => number } = {}) {
    this.#records = records;
    this.#counters = counters;
    this.#refreshMs = options.refreshMs ?? 3000;
    this.#now = options.now ?? Date.now;
  }

  /** The inference pipeline's check: once per request (memoised), with the request's model and the target's provider. */
  admitRequest(ctx: RequestContext, provider: string | undefined): Promise<Admission> {
    const kept = (ctx as WithAdmission)[this.#kept];
    if (kept) return kept.pending;
    const pending = this.#admitRequest(ctx, provider);
    // Not enumerable: a context copied by spreading ({...ctx}) is another request and must be admitted anew.
    Object.defineProperty(ctx, this.#kept, { value: { pending }, enumerable: false, configurable: true });
    return pending;
  }

  /** The rate-limit headers of an admitted request (after admitRequest resolved). */
  headersFor(ctx: RequestContext): Record<string, string> {
    return (ctx as WithAdmission)[this.#kept]?.admitted?.headers ?? NO_HEADERS;
  }

  async #admitRequest(ctx: RequestContext, provider: string | undefined): Promise<Admission> {
    const principal = ctx.principal;
    if (!principal) return EMPTY;
    const admission = await this.admit({
      organisationId: principal.organisationId,
      workspaceId: principal.workspaceId,
      apiKeyId: principal.keyId,
      userId: principal.userId,
      metadata: ctx.gateway?.metadata,
      provider,
      model: ctx.outcome?.requestedModel || undefined,
    });
    const kept = (ctx as WithAdmission)[this.#kept];
    if (kept) kept.admitted = admission;
    if (admission.background) ctx.waitUntil(admission.background);
    const outcome = ctx.outcome;
    if (admission.needsUsage && outcome) {
      ctx.waitUntil(
        outcome.done.then(() =>
          admission.settle({ tokens: outcome.usage?.total_tokens, costUsd: outcome.cost?.total }),
        ),
      );
    }
    return admission;
  }

  /** Checks (and for requests policies, counts) one request; throws a 429 HttpError naming the policy when refused. */
  async admit(subject: PolicySubject): Promise<Admission> {
    const policies = await this.#policiesOf(subject.organisationId);
    if (policies.length === 0) return EMPTY;
    const nowMs = this.#now();
    let admissions: Counted[] | undefined;
    let usage: Counted[] | undefined;
    for (const compiled of policies) {
      if (!compiled.matches(subject)) continue;
      const group = compiled.group(subject);
      const window = compiled.window(nowMs);
      const counted: Counted = {
        compiled,
        key: compiled.counterKey(group, window.start),
        group,
        start: window.start,
        end: window.end,
      };
      if (compiled.counting === "admission") {
        admissions ??= [];
        admissions.push(counted);
      } else {
        usage ??= [];
        usage.push(counted);
      }
    }
    if (!admissions && !usage) return EMPTY;

    // Tokens and cost: refuse groups already at their limit (one read for all of them).
    if (usage) {
      const values =
        usage.length === 1
          ? new Map([[usage[0]!.key, await this.#counters.get(usage[0]!.key)]])
          : await this.#counters.getMany(usage.map((counted) => counted.key));
      for (const counted of usage) {
        const value = values.get(counted.key) ?? 0;
        if (value >= counted.compiled.limit) throw this.#refusal(counted, value, nowMs);
      }
    }

    // Requests: one conditional add per policy.
    let headers = NO_HEADERS;
    let background: Promise<void> | undefined;
    if (admissions) {
      const count = (counted: Counted) =>
        this.#counters.add(counted.key, 1, {
          ceiling: counted.compiled.limit,
          expiresAt: counted.end === undefined ? undefined : counted.end + EXPIRY_MARGIN_SECONDS,
        });
      // One policy is the common case: no array of promises to wait on.
      const results =
        admissions.length === 1 ? [await count(admissions[0]!)] : await Promise.all(admissions.map(count));
      const refused = results.findIndex((result) => !result.admitted);
      if (refused !== -1) {
        await Promise.all(
          results.map((result, index) =>
            result.admitted ? this.#counters.add(admissions[index]!.key, -1).catch(() => undefined) : undefined,
          ),
        );
        throw this.#refusal(admissions[refused]!, results[refused]!.value, nowMs);
      }
      const firsts = admissions.filter((_, index) => results[index]!.value === 1);
      if (firsts.length > 0) background = this.#indexGroups(firsts);
      headers = this.#headers(admissions, results, nowMs);
    }

    if (!usage)
      return background ? { headers, needsUsage: false, settle: EMPTY.settle, background } : { ...EMPTY, headers };
    const toCount = usage;
    return {
      headers,
      needsUsage: true,
      background,
      settle: (amounts) => this.#settle(toCount, amounts),
    };
  }

  async #settle(usage: Counted[], amounts: { tokens?: number; costUsd?: number }): Promise<void> {
    try {
      const firsts: Counted[] = [];
      await Promise.all(
        usage.map(async (counted) => {
          const amount = counted.compiled.amountOf(amounts);
          if (!(amount > 0)) return;
          const result = await this.#counters.add(counted.key, amount, {
            expiresAt: counted.end === undefined ? undefined : counted.end + EXPIRY_MARGIN_SECONDS,
          });
          if (result.value === amount) firsts.push(counted);
        }),
      );
      if (firsts.length > 0) await this.#indexGroups(firsts);
    } catch (error) {
      console.error("policies: counting usage failed", error);
    }
  }

  /** Remembers the groups seen in a window, for GET .../:id/usage (single-item puts, once per group and window). */
  async #indexGroups(counted: Counted[]): Promise<void> {
    await Promise.all(
      counted.map((entry) =>
        this.#records
          .put({
            pk: groupIndexPk(entry.compiled.policy.id, entry.start),
            sk: `G#${entry.group.key}`,
            ...(entry.end !== undefined ? { ttl: entry.end + EXPIRY_MARGIN_SECONDS } : {}),
            policyId: entry.compiled.policy.id,
            group: entry.group.values,
            counterKey: entry.key,
          })
          .catch((error) => console.error("policies: indexing a usage group failed", error)),
      ),
    );
  }

  #headers(admissions: Counted[], results: Array<{ value: number }>, nowMs: number): Record<string, string> {
    let best: { limit: number; remaining: number; end: number | undefined } | undefined;
    admissions.forEach((counted, index) => {
      if (counted.compiled.policy.family !== "rate_limits") return;
      const remaining = Math.max(0, counted.compiled.limit - results[index]!.value);
      if (!best || remaining < best.remaining) best = { limit: counted.compiled.limit, remaining, end: counted.end };
    });
    if (!best) return NO_HEADERS;
    const chosen = best as { limit: number; remaining: number; end: number | undefined };
    return {
      "x-ratelimit-limit": String(chosen.limit),
      "x-ratelimit-remaining": String(chosen.remaining),
      "x-ratelimit-reset": String(secondsUntil(chosen.end, nowMs)),
    };
  }

  #refusal(counted: Counted, value: number, nowMs: number): HttpError {
    const { compiled } = counted;
    const isRate = compiled.policy.family === "rate_limits";
    const headers: Record<string, string> = {};
    let until = "";
    if (counted.end !== undefined) {
      const wait = secondsUntil(counted.end, nowMs);
      headers["retry-after"] = String(wait);
      until = isRate ? `; retry after ${wait} s` : `; it resets at ${new Date(counted.end * 1000).toISOString()}`;
    } else {
      until = "; it does not reset (raise its credit_limit to continue)";
    }
    if (isRate || compiled.counting === "admission") {
      headers["x-ratelimit-limit"] = String(compiled.limit);
      headers["x-ratelimit-remaining"] = "0";
      if (counted.end !== undefined) headers["x-ratelimit-reset"] = String(secondsUntil(counted.end, nowMs));
    }
    const groupText = Object.entries(counted.group.values)
      .map(([key, groupValue]) => `${key}=${groupValue ?? "(none)"}`)
      .join(", ");
    const used = compiled.toUnits(value);
    const message = isRate
      ? `Rate limit exceeded: ${compiled.describe()}${groupText ? ` for ${groupText}` : ""}${until}.`
      : `Usage limit reached: ${compiled.describe()}${groupText ? ` for ${groupText}` : ""} (used ${
          compiled.policy.type === "cost" ? `$${used.toFixed(6)}` : used
        })${until}.`;
    return new HttpError(429, message, {
      type: "rate_limit_error",
      code: isRate ? "rate_limit_exceeded" : "usage_limit_exceeded",
      headers,
    });
  }

  // -------------------------------------------------------------------------------------------------------
  // Cache

  /** Applies a change made in this process at once (no reload). */
  changed(organisationId: string, policy: PolicyResource | undefined, removedId?: string): void {
    const entry = this.#cache.get(organisationId);
    if (!entry) return;
    const id = policy?.id ?? removedId;
    const others = entry.policies.filter((compiled) => compiled.policy.id !== id);
    entry.policies = policy ? [...others, compilePolicy(policy)] : others;
    entry.generation += 1;
  }

  /** Drops the cached policies of an organisation (or all). */
  forget(organisationId?: string): void {
    if (organisationId === undefined) this.#cache.clear();
    else this.#cache.delete(organisationId);
  }

  /** The compiled policies of an organisation (cached). */
  async policiesOf(organisationId: string): Promise<CompiledPolicy[]> {
    return this.#policiesOf(organisationId);
  }

  #policiesOf(organisationId: string): Promise<CompiledPolicy[]> | CompiledPolicy[] {
    const entry = this.#cache.get(organisationId);
    if (entry) {
      if (!entry.refreshing && Date.now() - entry.loadedAt > this.#refreshMs) this.#refresh(organisationId, entry);
      return entry.policies;
    }
    let loading = this.#loading.get(organisationId);
    if (!loading) {
      loading = loadPolicies(this.#records, organisationId)
        .then((policies) => {
          const loaded: OrgEntry = { policies, loadedAt: Date.now(), generation: 0 };
          this.#cache.set(organisationId, loaded);
          return loaded;
        })
        .finally(() => this.#loading.delete(organisationId));
      this.#loading.set(organisationId, loading);
    }
    return loading.then((loaded) => loaded.policies);
  }

  #refresh(organisationId: string, entry: OrgEntry): void {
    const generation = entry.generation;
    entry.refreshing = loadPolicies(this.#records, organisationId)
      .then((policies) => {
        // A change applied in this process while loading wins; the next request refreshes again.
        if (entry.generation !== generation) return;
        entry.policies = policies;
        entry.loadedAt = Date.now();
      })
      .catch((error) => console.error("policies: refresh failed; keeping the cached policies", error))
      .finally(() => {
        entry.refreshing = undefined;
      });
  }
}

function secondsUntil(endSeconds: number | undefined, nowMs: number): number {
  if (endSeconds === undefined) return 0;
  return Math.max(1, Math.ceil(endSeconds - nowMs / 1000));
}

/** Every policy of an organisation (both families), compiled. */
export async function loadPolicies(records: Records, organisationId: string): Promise<CompiledPolicy[]> {
  const out: CompiledPolicy[] = [];
  for (const store of [usagePolicyStore(records), ratePolicyStore(records)]) {
    let cursor: string | undefined;
    do {
      const page = await store.list(organisationId, { limit: 100, cursor });
      for (const policy of page.items) if (policy.status === "active") out.push(compilePolicy(policy));
      cursor = page.cursor;
    } while (cursor);
  }
  return out;
}
