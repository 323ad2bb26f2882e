import type { Principal } from "../../auth/principal.ts";
import type { InferenceOutcome } from "../gateway/outcome.ts";
import { HttpError } from "../../http/errors.ts";
import type { CounterResult, Counters, Records } from "../../store/ports.ts";
import { TtlCache } from "../../util/ttl-cache.ts";
import {
  type CompiledPolicy,
  type CountedUsage,
  type PolicyResource,
  type PolicySubject,
  compilePolicy,
  groupIndexPk,
  ratePolicyStore,
  usagePolicyStore,
} from "./model.ts";
import type { UsageEstimate } from "./reservation.ts";

/**
 * Enforces usage-limit and rate-limit policies through the Counters port (pipeline step 3).
 *
 * Per request, one conditional add per policy whose conditions match, all at once:
 * - `requests` policies (usage or rate): `add(key, 1, {ceiling: limit})`, so concurrent requests never overshoot.
 * - `tokens` and `cost` policies: a reservation of the request's estimated usage (reservation.ts),
 *   `add(key, estimate, {below: limit})`: admitted while the group's usage (settled and reserved) is below its
 *   limit. After the answer (a stream when it ends; a failure, a client closing its stream) `settle` adds the
 *   real usage minus the reservation, exactly once, off the critical path. Concurrent requests thus pass the
 *   limit by at most the last admitted one (when the estimate is not below its real usage).
 * A refusal (or a store failure) rolls back the adds of the other policies of that request.
 * The limit compared is always the policy's current one (nothing caches an "exhausted" verdict), so raising
 * `credit_limit` re-enables exhausted groups at once (spec 3).
 *
 * Policies are cached per organisation and refreshed in the background every `refreshMs` (so requests never
 * wait for a refresh once warm: zero store reads for the policies themselves); changes made through this
 * process apply at once (`changed`), changes made through another within `refreshMs` (a request after an idle
 * spell waits for the refresh rather than use older policies).
 *
 * `admit` is the reusable check (MCP tool calls and any other caller); `admitRequest` is the inference
 * pipeline's wrapper, memoised per request so fallbacks and retries are admitted once.
 */

export interface Admission {
  /**
   * x-ratelimit-* headers of the tightest requests rate limit, and x-usagelimit-* headers of the tightest usage
   * limit (empty when none matched).
   */
  headers: Record<string, string>;
  /** The cost limits that refuse a model without a price (`unpriced: "deny"`), for each target to check. */
  refusesUnpriced?: CompiledPolicy[];
  /** True when tokens or cost policies matched: call `settle` with the real usage once known. */
  needsUsage: boolean;
  /**
   * Replaces the reservations made for the tokens and cost policies with the real usage (nothing used: they
   * are released). Only the first call counts. Never throws (failures are logged).
   */
  settle(usage: CountedUsage): Promise<void>;
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
  /** What admission adds: 1 for requests policies, the reservation (counter units) for tokens and cost. */
  amount: number;
}

/** The estimated usage of a request, asked for only when tokens or cost policies match. */
export type EstimateUsage = () => Promise<UsageEstimate> | UsageEstimate;

const NO_ESTIMATE: UsageEstimate = Object.freeze({ tokens: 0, costUsd: 0 });

/**
 * What an enforcer reads of a request's context (core/services.ts RequestContext): the caller, its gateway
 * metadata, the outcome that settles reservations, and where to hand work that finishes after the answer.
 */
export interface AdmissionContext {
  principal?: Principal;
  gateway?: { metadata?: Record<string, string> };
  outcome?: InferenceOutcome;
  waitUntil(work: Promise<unknown>): void;
}

/** A request context with what enforcers keep on it (see PolicyEnforcer's #kept). */
type WithAdmission = AdmissionContext & {
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

  /**
   * The inference pipeline's check: once per request (memoised), with the request's model and the target's
   * provider; `estimate` gives what the tokens and cost policies reserve (none: they only check the limit).
   * The reservations are settled when `ctx.outcome` is done, with its usage and cost.
   */
  admitRequest(ctx: AdmissionContext, provider: string | undefined, estimate?: EstimateUsage): Promise<Admission> {
    const kept = (ctx as WithAdmission)[this.#kept];
    if (kept) return kept.pending;
    const pending = this.#admitRequest(ctx, provider, estimate);
    // Not enumerable: a context copied by spreading ({...ctx}) is another request and must be admitted anew.
    Object.defineProperty(ctx, this.#kept, { value: { pending }, enumerable: false, configurable: true });
    return pending;
  }

  /** The rate-limit headers of an admitted request (after admitRequest resolved). */
  headersFor(ctx: AdmissionContext): Record<string, string> {
    return (ctx as WithAdmission)[this.#kept]?.admitted?.headers ?? NO_HEADERS;
  }

  /** The cost limits of an admitted request that refuse unpriced models (none: undefined). */
  refusesUnpriced(ctx: AdmissionContext): CompiledPolicy[] | undefined {
    return (ctx as WithAdmission)[this.#kept]?.admitted?.refusesUnpriced;
  }

  async #admitRequest(
    ctx: AdmissionContext,
    provider: string | undefined,
    estimate: EstimateUsage | undefined,
  ): Promise<Admission> {
    const principal = ctx.principal;
    if (!principal) return EMPTY;
    const admission = await this.admit(
      {
        organisationId: principal.organisationId,
        workspaceId: principal.workspaceId,
        apiKeyId: principal.keyId,
        userId: principal.userId,
        metadata: ctx.gateway?.metadata,
        provider,
        model: ctx.outcome?.requestedModel || undefined,
      },
      estimate,
    );
    const kept = (ctx as WithAdmission)[this.#kept];
    if (kept) kept.admitted = admission;
    if (admission.background) ctx.waitUntil(admission.background);
    if (admission.needsUsage) {
      const outcome = ctx.outcome;
      // Every inference path finishes its outcome (answer, failure, stream end or cancel): settle then, once.
      // Without an outcome no usage will be known: release the reservations now.
      ctx.waitUntil(
        outcome
          ? outcome.done.then(() =>
              admission.settle({
                tokens: outcome.usage?.total_tokens,
                costUsd: outcome.cost?.total,
                priced: outcome.cost ? outcome.cost.priced : undefined,
                promptTokens: outcome.usage?.prompt_tokens,
                completionTokens: outcome.usage?.completion_tokens,
              }),
            )
          : admission.settle({}),
      );
    }
    return admission;
  }

  /**
   * Checks and counts one request (requests policies: 1; tokens and cost policies: the reservation `estimate`
   * gives, asked for only when such policies match); throws a 429 HttpError naming the policy when refused.
   */
  async admit(subject: PolicySubject, estimate?: EstimateUsage): Promise<Admission> {
    const policies = await this.#policiesOf(subject.organisationId);
    if (policies.length === 0) return EMPTY;
    const nowMs = this.#now();
    let matched: Counted[] | undefined;
    let reserving = false;
    for (const compiled of policies) {
      if (!compiled.matches(subject)) continue;
      const group = compiled.group(subject);
      const window = compiled.window(nowMs);
      if (compiled.counting === "usage") reserving = true;
      matched ??= [];
      matched.push({
        compiled,
        key: compiled.counterKey(group, window.start),
        group,
        start: window.start,
        end: window.end,
        amount: 1,
      });
    }
    if (!matched) return EMPTY;
    if (reserving) {
      const estimated = await this.#estimate(estimate);
      for (const counted of matched)
        if (counted.compiled.counting === "usage") counted.amount = unitsOf(counted, estimated);
    }

    const add = (counted: Counted) =>
      this.#counters.add(counted.key, counted.amount, {
        ...(counted.compiled.counting === "admission"
          ? { ceiling: counted.compiled.limit }
          : { below: counted.compiled.limit }),
        expiresAt: expiryOf(counted),
      });
    // One policy is the common case: no array of promises to wait on.
    let results: CounterResult[];
    if (matched.length === 1) results = [await add(matched[0]!)];
    else {
      const settled = await Promise.allSettled(matched.map(add));
      const failed = settled.find((result) => result.status === "rejected");
      if (failed) {
        // A store failure on one policy: undo what the others counted before reporting it.
        await this.#rollBack(
          matched,
          settled.map((result) => (result.status === "fulfilled" ? result.value : undefined)),
        );
        throw failed.reason;
      }
      results = settled.map((result) => (result as PromiseFulfilledResult<CounterResult>).value);
    }
    const refused = results.findIndex((result) => !result.admitted);
    if (refused !== -1) {
      await this.#rollBack(matched, results);
      throw this.#refusal(matched[refused]!, results[refused]!.value, nowMs);
    }

    const firsts = matched.filter((counted, index) => isFirst(counted.amount, results[index]!.value));
    const background = firsts.length > 0 ? this.#indexGroups(firsts) : undefined;
    const headers = this.#headers(matched, results, nowMs);
    if (!reserving)
      return background ? { headers, needsUsage: false, settle: EMPTY.settle, background } : { ...EMPTY, headers };
    const reserved = matched.filter((counted) => counted.compiled.counting === "usage");
    const refusing = reserved.filter((counted) => counted.compiled.unpriced === "deny").map(({ compiled }) => compiled);
    let settling: Promise<void> | undefined;
    return {
      headers,
      needsUsage: true,
      ...(refusing.length > 0 ? { refusesUnpriced: refusing } : {}),
      background,
      settle: (amounts) => {
        settling ??= this.#settle(reserved, amounts);
        return settling;
      },
    };
  }

  async #estimate(estimate: EstimateUsage | undefined): Promise<UsageEstimate> {
    if (!estimate) return NO_ESTIMATE;
    try {
      return await estimate();
    } catch (error) {
      // The limit is still checked; only the reservation is lost.
      console.error("policies: estimating a request's usage failed", error);
      return NO_ESTIMATE;
    }
  }

  /** Takes back the adds that were admitted (a refusal or a failure elsewhere ends the request). */
  async #rollBack(matched: Counted[], results: Array<CounterResult | undefined>): Promise<void> {
    await Promise.all(
      matched.map((counted, index) =>
        results[index]?.admitted && counted.amount !== 0
          ? this.#counters
              .add(counted.key, -counted.amount)
              .catch((error) => console.error("policies: rolling back a count failed", error))
          : undefined,
      ),
    );
  }

  /** Adds real usage minus the reservation (negative when the estimate was larger; all of it back on failure). */
  async #settle(reserved: Counted[], amounts: CountedUsage): Promise<void> {
    try {
      const firsts: Counted[] = [];
      await Promise.all(
        reserved.map(async (counted) => {
          const difference = unitsOf(counted, amounts) - counted.amount;
          if (difference === 0) return;
          const result = await this.#counters.add(counted.key, difference, { expiresAt: expiryOf(counted) });
          if (isFirst(difference, result.value)) firsts.push(counted);
        }),
      );
      if (firsts.length > 0) await this.#indexGroups(firsts);
    } catch (error) {
      console.error("policies: settling usage failed", error);
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

  #headers(matched: Counted[], results: Array<{ value: number }>, nowMs: number): Record<string, string> {
    let rate: { limit: number; remaining: number; end: number | undefined } | undefined;
    let usage: { counted: Counted; remaining: number; share: number } | undefined;
    matched.forEach((counted, index) => {
      const { compiled } = counted;
      let remaining = Math.max(0, compiled.limit - results[index]!.value);
      if (compiled.policy.family === "rate_limits") {
        if (compiled.counting === "admission" && (!rate || remaining < rate.remaining))
          rate = { limit: compiled.limit, remaining, end: counted.end };
        return;
      }
      // The tightest usage limit: the least left of its limit. A tokens or cost limit tells what was left when
      // this request was admitted: its own reservation is an estimate (the output it may use), not its usage.
      if (compiled.counting === "usage")
        remaining = Math.max(0, compiled.limit - (results[index]!.value - counted.amount));
      const share = compiled.limit > 0 ? remaining / compiled.limit : 0;
      if (!usage || share < usage.share) usage = { counted, remaining, share };
    });
    if (!rate && !usage) return NO_HEADERS;
    const headers: Record<string, string> = {};
    if (rate) {
      const chosen = rate as { limit: number; remaining: number; end: number | undefined };
      headers["x-ratelimit-limit"] = String(chosen.limit);
      headers["x-ratelimit-remaining"] = String(chosen.remaining);
      headers["x-ratelimit-reset"] = String(secondsUntil(chosen.end, nowMs));
    }
    if (usage) {
      const chosen = usage as { counted: Counted; remaining: number };
      Object.assign(headers, usageLimitHeaders(chosen.counted, chosen.remaining, nowMs));
    }
    return headers;
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
    if (isRate) {
      headers["x-ratelimit-limit"] = String(compiled.limit);
      headers["x-ratelimit-remaining"] = "0";
      if (counted.end !== undefined) headers["x-ratelimit-reset"] = String(secondsUntil(counted.end, nowMs));
    } else Object.assign(headers, usageLimitHeaders(counted, 0, nowMs));
    const groupText = Object.entries(counted.group.values)
      .map(([key, groupValue]) => `${key}=${groupValue ?? "(none)"}`)
      .join(", ");
    const used = compiled.toUnits(value);
    const message = isRate
      ? `Rate limit exceeded: ${compiled.describe()}${groupText ? ` for ${groupText}` : ""}${until}.`
      : `Usage limit reached: ${compiled.describe()}${groupText ? ` for ${groupText}` : ""} (used ${
          compiled.policy.type === "cost" ? `$${used.toFixed(6)}` : used
        }${compiled.counting === "usage" ? ", with what requests in flight reserved" : ""})${until}.`;
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
      const age = this.#now() - entry.loadedAt;
      // Refreshed in the background from half the period on, so steady traffic never waits; past the period
      // (no request for a while) the request waits for the store, so no process uses policies older than
      // refreshMs, however long it was idle (another process may have changed them meanwhile).
      if (!entry.refreshing && age > this.#refreshMs / 2) this.#refresh(organisationId, entry);
      if (age <= this.#refreshMs) return entry.policies;
      return entry.refreshing!.then(() => entry.policies);
    }
    let loading = this.#loading.get(organisationId);
    if (!loading) {
      loading = loadPolicies(this.#records, organisationId)
        .then((policies) => {
          const loaded: OrgEntry = { policies, loadedAt: this.#now(), generation: 0 };
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
        entry.loadedAt = this.#now();
      })
      .catch((error) => console.error("policies: refresh failed; keeping the cached policies", error))
      .finally(() => {
        entry.refreshing = undefined;
      });
  }
}

/**
 * The state of a usage limit, in the x-ratelimit-* style: its policy and type, limit and what is left in the
 * type's unit (USD for cost), and seconds until it resets (absent for a limit that never resets).
 */
function usageLimitHeaders(counted: Counted, remaining: number, nowMs: number): Record<string, string> {
  const { compiled } = counted;
  const headers: Record<string, string> = {
    "x-usagelimit-policy": compiled.policy.id,
    "x-usagelimit-type": compiled.policy.type,
    "x-usagelimit-limit": String(compiled.toUnits(compiled.limit)),
    "x-usagelimit-remaining": String(compiled.toUnits(remaining)),
  };
  if (counted.end !== undefined) headers["x-usagelimit-reset"] = String(secondsUntil(counted.end, nowMs));
  return headers;
}

/** Counters outlive their window by a margin; a window that never ends keeps its counters. */
function expiryOf(counted: Counted): number | undefined {
  return counted.end === undefined ? undefined : counted.end + EXPIRY_MARGIN_SECONDS;
}

/** A usage in the policy's counter units: 0 unless a positive finite amount (an estimate may be anything). */
function unitsOf(counted: Counted, usage: CountedUsage): number {
  const amount = counted.compiled.amountOf(usage);
  return Number.isFinite(amount) && amount > 0 ? amount : 0;
}

/**
 * Whether an add of `amount` found the group's counter at 0, so the group may not be in the usage index of its
 * window yet. Counters never go below 0, so every group with usage passed this way once.
 */
function isFirst(amount: number, value: number): boolean {
  return amount > 0 && value === amount;
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
