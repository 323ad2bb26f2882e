import type { RequestLog } from "../logs/log-record.ts";
import type { Counters, RecordItem, Records } from "../../store/ports.ts";
import {
  type CellGroup,
  type CellSums,
  type CounterDelta,
  type GuardrailKeys,
  type PairKeys,
  type Prepared,
  type UserKeys,
  countedCell,
  prepareBatch,
} from "./cell-groups.ts";
import {
  CELL_CAP,
  GUARDRAIL_CAP,
  METADATA_CAP,
  OTHER,
  USER_CAP,
  cellKey,
  distinctKey,
  groupKey,
  indexSort,
  latencyBucket,
  workspaceKey,
} from "./keys.ts";

/**
 * What is left to write after the rounds that need answers from the store: counter adds whose result nobody
 * reads and idempotent index puts. Writing them later, in any order, once or summed with other deltas, gives
 * the same aggregates.
 */
export interface CountingPlan {
  adds: Map<string, CounterDelta>;
  /** Index records by `pk \n sk`. */
  puts: Map<string, RecordItem>;
}

export const emptyPlan = (): CountingPlan => ({ adds: new Map(), puts: new Map() });

/** Adds a delta to a plan (summing with what is there; the first expiry wins, as for a live counter). */
export function planAdd(plan: CountingPlan, key: string, amount: number, expiresAt: number): void {
  if (!amount) return;
  const entry = plan.adds.get(key);
  if (entry) entry.amount += amount;
  else plan.adds.set(key, { amount, expiresAt });
}

export function planPut(plan: CountingPlan, item: RecordItem): void {
  plan.puts.set(`${item.pk}\n${item.sk}`, item);
}

/**
 * A write of rounds 1 and 2 failed. `applied` lists the adds that did succeed (key, amount, expiry), so a
 * caller that will count the same logs again can undo them first (the stream worker does).
 */
export class CountingError extends Error {
  readonly applied: Array<[string, number, number]>;

  constructor(cause: unknown, applied: Array<[string, number, number]>) {
    super(`analytics counting failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "CountingError";
    this.applied = applied;
  }
}

interface Admission {
  /** The round-1 key whose value showed the entry is new today, and the sum added to it. */
  key: string;
  amount: number;
  expiresAt: number;
  distinct: string;
  cap: number;
  indexPk: string;
  entry: string[];
  workspace: string;
  overflowKey: string;
  overflow: string[];
  /** Called once admitted (the users' distinct count). */
  onAdmit?: () => void;
}

/**
 * HIT and SEMANTIC HIT (x-gateway-cache-status) are hits, as are the spellings custom logs use (`hit_semantic`);
 * MISS, SEMANTIC MISS, REFRESH and DISABLED are not.
 */
export function isCacheHit(status: string | undefined): boolean {
  return status !== undefined && /^(hit|semantic[ _-]?hit$)/i.test(status);
}

/**
 * Counts a group of request logs into the analytics aggregates (see core/observe/analytics/keys.ts for the layout).
 * One log (the local request path) or a whole batch (the AWS stream worker) gives the same aggregates; a
 * batch sums the deltas of its logs so each distinct counter is written once:
 * - round 1: the daily count of each cell, user and metadata pair (and the user's hourly count): one add per
 *   distinct key with the batch's sum, whose result tells whether the value is new today (the counter was 0);
 * - round 2, only for values new today: one capped add to the workspace's distinct counter; admitted, the
 *   value is indexed; refused (the cap is reached), its round-1 sum moves to `other`;
 * - round 3: everything else (hourly count, tokens, cost, errors, cache hits, latency sketch, user and metadata
 *   cost, distinct users per hour / day, latency index entries) is returned as a plan for the caller to write:
 *   locally summed for a second with other requests (PendingCounters), on AWS written once per batch.
 * Rounds 1 and 2 are written here. When one of their writes fails, CountingError names the adds that were
 * applied. `indexed` remembers latency index entries already put by this process (only saves repeats).
 * Logs of one organisation, hour and cell share a CellGroup (cell-groups.ts), so their common keys are built once.
 */
export async function countLogs(
  stores: { counters: Counters; records: Records },
  logs: RequestLog[],
  indexed: Set<string> = new Set(),
): Promise<CountingPlan> {
  const { prepared, groups } = prepareBatch(logs);
  const plan = emptyPlan();
  if (prepared.length === 0) return plan;
  const writes = new CounterWrites(stores.counters);
  const daily = await countDaily(writes, prepared);
  const admitted = await admitNewValues(writes, prepared, daily, plan);
  countTotals(prepared, groups, daily, admitted, plan, indexed);
  return plan;
}

/** The counter writes of rounds 1 and 2, and the adds that succeeded so far (what CountingError reports). */
class CounterWrites {
  readonly #counters: Counters;
  readonly applied: Array<[string, number, number]> = [];

  constructor(counters: Counters) {
    this.#counters = counters;
  }

  async add(key: string, amount: number, expiresAt: number) {
    const result = await this.#counters.add(key, amount, { expiresAt });
    this.applied.push([key, amount, expiresAt]);
    return result;
  }

  /** One capped add to a distinct counter (the caller records it as applied when admitted). */
  admit(key: string, ceiling: number, expiresAt: number) {
    return this.#counters.add(key, 1, { ceiling, expiresAt });
  }

  /** Runs every write; if any failed, throws CountingError with what was applied so far. */
  settle(writes: Array<() => Promise<unknown>>): Promise<void> {
    return settle(writes, this.applied);
  }
}

/** Round 1's sums, and whether a key's value is new today (its counter was 0 before the batch's sum). */
interface DailyCounts {
  adds: Map<string, CounterDelta>;
  isNew(key: string): boolean;
}

/** Round 1: the daily counts that also tell whether a value is new today (added in log order). */
async function countDaily(writes: CounterWrites, prepared: Prepared[]): Promise<DailyCounts> {
  const round1 = emptyPlan();
  for (const { group, user, pairs, guardrails, hourExpiry, dayExpiry } of prepared) {
    planAdd(round1, group.dayCountKey, 1, dayExpiry);
    if (user) {
      planAdd(round1, user.day, 1, dayExpiry);
      planAdd(round1, user.hour, 1, hourExpiry);
    }
    for (const pair of pairs) planAdd(round1, pair.count, 1, dayExpiry);
    for (const { keys } of guardrails) planAdd(round1, keys.count, 1, dayExpiry);
  }
  const values = new Map<string, number>();
  await writes.settle(
    [...round1.adds].map(([key, { amount, expiresAt }]) => async () => {
      values.set(key, (await writes.add(key, amount, expiresAt)).value);
    }),
  );
  return { adds: round1.adds, isNew: (key) => values.get(key) === round1.adds.get(key)?.amount };
}

/** An index record of the aggregates (a value seen in a day, a latency bucket): an idempotent put. */
const putIndex = (plan: CountingPlan, pk: string, parts: string[], ttl: number) =>
  planPut(plan, { pk, sk: indexSort(...parts), ttl });

/**
 * Round 2 (rare): admit new values under the caps and index them, in the order their logs come; a value refused
 * by its cap has its round-1 sum moved to `other`. Answers, per key considered, whether it was admitted.
 */
async function admitNewValues(
  writes: CounterWrites,
  prepared: Prepared[],
  daily: DailyCounts,
  plan: CountingPlan,
): Promise<Map<string, boolean>> {
  const admissions = new Map<string, Admission>();
  const admitted = new Map<string, boolean>();
  /** Describes an admission only for a key new today and not yet considered (most keys are neither). */
  const consider = (key: string, describe: () => Omit<Admission, "key" | "amount" | "expiresAt">) => {
    if (admissions.has(key) || !daily.isNew(key)) return;
    const { amount, expiresAt } = daily.adds.get(key)!;
    admissions.set(key, { key, amount, expiresAt, ...describe() });
  };
  // Usually no value is new today, and then there is nothing to consider.
  if ([...daily.adds.keys()].some(daily.isNew)) {
    for (const entry of prepared) {
      const { group, user } = entry;
      consider(group.dayCountKey, () => cellAdmission(group));
      if (user) {
        const countUser = () =>
          planAdd(plan, workspaceKey(group.org, group.day, group.cell.workspace, "u"), 1, entry.dayExpiry);
        consider(user.day, () => ({ ...userAdmission(group, user), onAdmit: countUser }));
      }
      for (const pair of entry.pairs) consider(pair.count, () => pairAdmission(group, pair));
      for (const { keys } of entry.guardrails) consider(keys.count, () => guardrailAdmission(group, keys));
    }
  }
  await writes.settle(
    [...admissions.values()].map((admission) => async () => {
      const { key, amount, expiresAt } = admission;
      const result = await writes.admit(admission.distinct, admission.cap, expiresAt);
      if (result.admitted) {
        writes.applied.push([admission.distinct, 1, expiresAt]);
        admitted.set(key, true);
        putIndex(plan, admission.indexPk, admission.entry, expiresAt);
        putIndex(plan, admission.indexPk, ["w", admission.workspace], expiresAt);
        admission.onAdmit?.();
        return;
      }
      admitted.set(key, false);
      await writes.add(key, -amount, expiresAt);
      const other = await writes.add(admission.overflowKey, amount, expiresAt);
      if (other.value === amount) putIndex(plan, admission.indexPk, admission.overflow, expiresAt);
    }),
  );
  return admitted;
}

/** The name a value is counted under: `other` when its cap refused it. */
type NameOf = (key: string, name: string) => string;

/**
 * Round 3: everything else, into the plan. Cell counters are summed in CellSums and set once each; user and
 * metadata costs (named per log) are added log by log.
 */
function countTotals(
  prepared: Prepared[],
  groups: CellGroup[],
  daily: DailyCounts,
  admitted: Map<string, boolean>,
  plan: CountingPlan,
  indexed: Set<string>,
): void {
  const sums = new Map<string, CellSums>();
  for (const group of groups) group.counted = countedCell(group, admitted.get(group.dayCountKey) === false, sums);
  const nameOf: NameOf = (key, name) => (admitted.get(key) === false ? OTHER : name);
  const newUserHours = new Set<string>();
  for (const entry of prepared) {
    const { log, group, user, hourExpiry, dayExpiry } = entry;
    const costMicros = log.cost ? Math.round(log.cost * 1e6) : 0;
    countCell(entry, costMicros, plan, indexed);
    if (user) {
      // A user new this hour counts once into the workspace's distinct users of the hour (admitted or not).
      if (daily.isNew(user.hour) && !newUserHours.has(user.hour)) {
        newUserHours.add(user.hour);
        planAdd(plan, workspaceKey(group.org, group.hour, group.cell.workspace, "u"), 1, hourExpiry);
      }
      if (costMicros) {
        user.cost ??= groupKey(group.org, group.day, group.cell.workspace, "u", nameOf(user.day, user.name), "c");
        planAdd(plan, user.cost, costMicros, dayExpiry);
      }
    }
    countGuardrails(entry, plan, nameOf);
    if (!costMicros) continue;
    for (const pair of entry.pairs) {
      const name = nameOf(pair.count, pair.value);
      pair.cost ??= groupKey(group.org, group.day, group.cell.workspace, pair.dimension, name, "c");
      planAdd(plan, pair.cost, costMicros, dayExpiry);
    }
  }
  for (const cellSums of sums.values()) cellSums.writeTo(plan.adds);
}

/** A log's counters of its cell (hour and day) and its latency bucket, indexed once per process. */
function countCell(entry: Prepared, costMicros: number, plan: CountingPlan, indexed: Set<string>): void {
  const { log, group, hourExpiry, dayExpiry } = entry;
  const { hour, day } = group.counted!;
  hour.add("n", 1, hourExpiry);
  const both = (field: string, amount: number) => {
    hour.add(field, amount, hourExpiry);
    day.add(field, amount, dayExpiry);
  };
  if (log.usage) {
    if (log.usage.promptTokens) both("p", log.usage.promptTokens);
    if (log.usage.completionTokens) both("o", log.usage.completionTokens);
  }
  if (costMicros) both("c", costMicros);
  if (log.status >= 400 || log.error !== undefined) both("e", 1);
  if (isCacheHit(log.cacheStatus)) {
    both("h", 1);
    if (log.cacheSavedCost) both("s", Math.round(log.cacheSavedCost * 1e6));
  }
  const bucket = latencyBucket(log.latencyMs);
  hour.addLatency(bucket, hourExpiry);
  day.addLatency(bucket, dayExpiry);
  const latencyIndex = group.latencyIndexEntry(bucket);
  if (!indexed.has(latencyIndex.seenKey)) {
    if (indexed.size > 50_000) indexed.clear();
    indexed.add(latencyIndex.seenKey);
    putIndex(plan, group.indexPk, latencyIndex.parts, dayExpiry);
  }
}

/** A log's guardrail verdicts: runs failed and denied, checks run and failed, time, per guardrail and day. */
function countGuardrails(entry: Prepared, plan: CountingPlan, nameOf: NameOf): void {
  const { group, dayExpiry } = entry;
  for (const { keys, verdict } of entry.guardrails) {
    keys.fields ??= groupKey(group.org, group.day, group.cell.workspace, "g", nameOf(keys.count, keys.id), "");
    const checks = Array.isArray(verdict.checks) ? verdict.checks : [];
    const failedChecks = checks.filter((check) => check?.verdict === false).length;
    planAdd(plan, `${keys.fields}f`, verdict.verdict === false ? 1 : 0, dayExpiry);
    planAdd(plan, `${keys.fields}d`, verdict.verdict === false && verdict.deny === true ? 1 : 0, dayExpiry);
    planAdd(plan, `${keys.fields}k`, checks.length, dayExpiry);
    planAdd(plan, `${keys.fields}x`, failedChecks, dayExpiry);
    const micros = Math.round((Number(verdict.execution_time_ms) || 0) * 1000);
    planAdd(plan, `${keys.fields}t`, Math.max(0, micros), dayExpiry);
  }
}

function cellAdmission(group: CellGroup): Omit<Admission, "key" | "amount" | "expiresAt"> {
  const { org, day, cell, indexPk } = group;
  const { workspace } = cell;
  return {
    distinct: distinctKey(org, day, workspace, "cells"),
    cap: CELL_CAP,
    indexPk,
    entry: ["c", workspace, cell.provider, cell.model],
    workspace,
    overflowKey: cellKey(org, day, { workspace, provider: OTHER, model: OTHER }, "n"),
    overflow: ["c", workspace, OTHER, OTHER],
  };
}

function userAdmission(group: CellGroup, user: UserKeys): Omit<Admission, "key" | "amount" | "expiresAt"> {
  const { org, day, indexPk } = group;
  const { workspace } = group.cell;
  return {
    distinct: distinctKey(org, day, workspace, "users"),
    cap: USER_CAP,
    indexPk,
    entry: ["u", workspace, user.name],
    workspace,
    overflowKey: groupKey(org, day, workspace, "u", OTHER, "n"),
    overflow: ["u", workspace, OTHER],
  };
}

function pairAdmission(group: CellGroup, pair: PairKeys): Omit<Admission, "key" | "amount" | "expiresAt"> {
  const { org, day, indexPk } = group;
  const { workspace } = group.cell;
  return {
    distinct: distinctKey(org, day, workspace, "metadata"),
    cap: METADATA_CAP,
    indexPk,
    entry: ["m", workspace, pair.key, pair.value],
    workspace,
    overflowKey: groupKey(org, day, workspace, pair.dimension, OTHER, "n"),
    overflow: ["m", workspace, pair.key, OTHER],
  };
}

function guardrailAdmission(group: CellGroup, keys: GuardrailKeys): Omit<Admission, "key" | "amount" | "expiresAt"> {
  const { org, day, indexPk } = group;
  const { workspace } = group.cell;
  return {
    distinct: distinctKey(org, day, workspace, "guardrails"),
    cap: GUARDRAIL_CAP,
    indexPk,
    entry: ["g", workspace, keys.id],
    workspace,
    overflowKey: groupKey(org, day, workspace, "g", OTHER, "n"),
    overflow: ["g", workspace, OTHER],
  };
}

/** Writes in flight at once: a batch may have hundreds of distinct keys, sockets are better kept few. */
export const WRITE_CONCURRENCY = 32;

/** Runs the tasks, at most `limit` at a time, and reports each outcome (never rejects). */
export async function runLimited(
  tasks: Array<() => Promise<unknown>>,
  limit = WRITE_CONCURRENCY,
): Promise<PromiseSettledResult<unknown>[]> {
  const results: PromiseSettledResult<unknown>[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const position = next++;
      try {
        results[position] = { status: "fulfilled", value: await tasks[position]!() };
      } catch (reason) {
        results[position] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** Runs every write; if any failed, throws CountingError with what was applied so far. */
async function settle(writes: Array<() => Promise<unknown>>, applied: Array<[string, number, number]>): Promise<void> {
  const results = await runLimited(writes);
  const failure = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
  if (failure) throw new CountingError(failure.reason, [...applied]);
}
