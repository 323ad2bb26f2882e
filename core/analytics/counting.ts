import type { RequestLog } from "../logs/log-record.ts";
import { ROUTE_FAMILIES } from "../routes/table.ts";
import type { Counters, RecordItem, Records } from "../store/ports.ts";
import {
  CELL_CAP,
  type Cell,
  DAILY_RETENTION_DAYS,
  HOURLY_RETENTION_DAYS,
  METADATA_CAP,
  METADATA_PAIRS_PER_REQUEST,
  NO_VALUE,
  OTHER,
  USER_CAP,
  cellKey,
  cellPrefix,
  dayBucket,
  distinctKey,
  groupKey,
  hourBucket,
  indexPartition,
  indexSort,
  latencyBucket,
  workspaceKey,
} from "./keys.ts";

/** Analytics count inference traffic: routes of data-plane families (and custom logs), not control-plane calls. */
const DATA_PLANE_ROUTES = new Set(
  ROUTE_FAMILIES.filter((family) => family.dataPlane).flatMap((family) => family.routes.map((route) => route.path)),
);

/** A counter delta: the amount, and the expiry the counter gets if the add creates it. */
export interface CounterDelta {
  amount: number;
  expiresAt: number;
}

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

interface Prepared {
  log: RequestLog;
  org: string;
  hour: string;
  day: string;
  hourExpiry: number;
  dayExpiry: number;
  workspace: string;
  cell: Cell;
  user?: string;
  pairs: Array<[string, string]>;
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
 * Counts a group of request logs into the analytics aggregates (see core/analytics/keys.ts for the layout).
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
 */
export async function countLogs(
  stores: { counters: Counters; records: Records },
  logs: RequestLog[],
  indexed: Set<string> = new Set(),
): Promise<CountingPlan> {
  const prepared = logs.map(prepare).filter((entry): entry is Prepared => entry !== undefined);
  const plan = emptyPlan();
  if (prepared.length === 0) return plan;
  const applied: Array<[string, number, number]> = [];
  const add = async (key: string, amount: number, expiresAt: number) => {
    const result = await stores.counters.add(key, amount, { expiresAt });
    applied.push([key, amount, expiresAt]);
    return result;
  };

  // Round 1: the daily counts that also tell whether a value is new today.
  const round1 = emptyPlan();
  for (const entry of prepared) {
    const { org, day, hour, workspace, user } = entry;
    planAdd(round1, cellKey(org, day, entry.cell, "n"), 1, entry.dayExpiry);
    if (user) {
      planAdd(round1, groupKey(org, day, workspace, "u", user, "n"), 1, entry.dayExpiry);
      planAdd(round1, groupKey(org, hour, workspace, "u", user, "n"), 1, entry.hourExpiry);
    }
    for (const [key, value] of entry.pairs)
      planAdd(round1, groupKey(org, day, workspace, `m:${key}`, value, "n"), 1, entry.dayExpiry);
  }
  const values = new Map<string, number>();
  await settle(
    [...round1.adds].map(([key, { amount, expiresAt }]) => async () => {
      values.set(key, (await add(key, amount, expiresAt)).value);
    }),
    applied,
  );
  /** True when the counter was 0 before this group's sum. */
  const isNew = (key: string) => values.get(key) === round1.adds.get(key)?.amount;

  // Round 2 (rare): admit new values under the caps and index them.
  const admissions = new Map<string, Admission>();
  const admitted = new Map<string, boolean>();
  for (const entry of prepared) {
    const { org, day, workspace, user, cell } = entry;
    const indexPk = indexPartition(org, day.slice(1));
    const consider = (admission: Omit<Admission, "amount" | "expiresAt">) => {
      if (admissions.has(admission.key) || !isNew(admission.key)) return;
      const { amount, expiresAt } = round1.adds.get(admission.key)!;
      admissions.set(admission.key, { ...admission, amount, expiresAt });
    };
    consider({
      key: cellKey(org, day, cell, "n"),
      distinct: distinctKey(org, day, workspace, "cells"),
      cap: CELL_CAP,
      indexPk,
      entry: ["c", workspace, cell.provider, cell.model],
      workspace,
      overflowKey: cellKey(org, day, { workspace, provider: OTHER, model: OTHER }, "n"),
      overflow: ["c", workspace, OTHER, OTHER],
    });
    if (user) {
      consider({
        key: groupKey(org, day, workspace, "u", user, "n"),
        distinct: distinctKey(org, day, workspace, "users"),
        cap: USER_CAP,
        indexPk,
        entry: ["u", workspace, user],
        workspace,
        overflowKey: groupKey(org, day, workspace, "u", OTHER, "n"),
        overflow: ["u", workspace, OTHER],
        onAdmit: () => planAdd(plan, workspaceKey(org, day, workspace, "u"), 1, entry.dayExpiry),
      });
    }
    for (const [key, value] of entry.pairs) {
      const dimension = `m:${key}`;
      consider({
        key: groupKey(org, day, workspace, dimension, value, "n"),
        distinct: distinctKey(org, day, workspace, "metadata"),
        cap: METADATA_CAP,
        indexPk,
        entry: ["m", workspace, key, value],
        workspace,
        overflowKey: groupKey(org, day, workspace, dimension, OTHER, "n"),
        overflow: ["m", workspace, key, OTHER],
      });
    }
  }
  const index = (pk: string, parts: string[], ttl: number) => planPut(plan, { pk, sk: indexSort(...parts), ttl });
  await settle(
    [...admissions.values()].map((admission) => async () => {
      const { key, amount, expiresAt } = admission;
      const result = await stores.counters.add(admission.distinct, 1, { ceiling: admission.cap, expiresAt });
      if (result.admitted) {
        applied.push([admission.distinct, 1, expiresAt]);
        admitted.set(key, true);
        index(admission.indexPk, admission.entry, expiresAt);
        index(admission.indexPk, ["w", admission.workspace], expiresAt);
        admission.onAdmit?.();
        return;
      }
      admitted.set(key, false);
      await add(key, -amount, expiresAt);
      const other = await add(admission.overflowKey, amount, expiresAt);
      if (other.value === amount) index(admission.indexPk, admission.overflow, expiresAt);
    }),
    applied,
  );
  /** A value refused by its cap is counted as `other`. */
  const nameOf = (key: string, name: string) => (admitted.get(key) === false ? OTHER : name);
  const newUserHours = new Set<string>();

  // Round 3: everything else, into the plan.
  for (const entry of prepared) {
    const { log, org, hour, day, workspace, user, hourExpiry, dayExpiry } = entry;
    const cell =
      admitted.get(cellKey(org, day, entry.cell, "n")) === false
        ? { workspace, provider: OTHER, model: OTHER }
        : entry.cell;
    const costMicros = log.cost ? Math.round(log.cost * 1e6) : 0;
    const failed = log.status >= 400 || log.error !== undefined;
    const cacheHit = log.cacheStatus !== undefined && /^hit/i.test(log.cacheStatus);
    const latency = `l${latencyBucket(log.latencyMs)}`;
    // The cell's hourly and daily keys differ only by their last field: their prefixes are built once.
    const hourCell = cellPrefix(org, hour, cell);
    const dayCell = cellPrefix(org, day, cell);
    planAdd(plan, `${hourCell}n`, 1, hourExpiry);
    const both = (field: string, amount: number) => {
      planAdd(plan, hourCell + field, amount, hourExpiry);
      planAdd(plan, dayCell + field, amount, dayExpiry);
    };
    if (log.usage) {
      if (log.usage.promptTokens) both("p", log.usage.promptTokens);
      if (log.usage.completionTokens) both("o", log.usage.completionTokens);
    }
    if (costMicros) both("c", costMicros);
    if (failed) both("e", 1);
    if (cacheHit) both("h", 1);
    both(latency, 1);
    const dayIndex = day.slice(1);
    const latencyEntry = ["l", workspace, cell.provider, cell.model, latency.slice(1)];
    const latencyIndexKey = `${org}|${dayIndex}|${latencyEntry.join("|")}`;
    if (!indexed.has(latencyIndexKey)) {
      if (indexed.size > 50_000) indexed.clear();
      indexed.add(latencyIndexKey);
      index(indexPartition(org, dayIndex), latencyEntry, dayExpiry);
    }
    if (user) {
      // A user new this hour counts once into the workspace's distinct users of the hour (admitted or not).
      const userHour = groupKey(org, hour, workspace, "u", user, "n");
      if (isNew(userHour) && !newUserHours.has(userHour)) {
        newUserHours.add(userHour);
        planAdd(plan, workspaceKey(org, hour, workspace, "u"), 1, hourExpiry);
      }
      const userName = nameOf(groupKey(org, day, workspace, "u", user, "n"), user);
      if (costMicros) planAdd(plan, groupKey(org, day, workspace, "u", userName, "c"), costMicros, dayExpiry);
    }
    if (!costMicros) continue;
    for (const [key, value] of entry.pairs) {
      const name = nameOf(groupKey(org, day, workspace, `m:${key}`, value, "n"), value);
      planAdd(plan, groupKey(org, day, workspace, `m:${key}`, name, "c"), costMicros, dayExpiry);
    }
  }
  return plan;
}

/**
 * A copy of a log with only what counting reads (no bodies, headers or attempts): what a batch keeps in
 * memory until it is counted.
 */
export function countedFields(log: RequestLog): RequestLog {
  return {
    id: log.id,
    createdAt: log.createdAt,
    source: log.source,
    route: log.route,
    organisationId: log.organisationId,
    workspaceId: log.workspaceId,
    userId: log.userId,
    metadata: log.metadata,
    provider: log.provider,
    requestedModel: log.requestedModel,
    answeredModel: log.answeredModel,
    status: log.status,
    error: log.error,
    cacheStatus: log.cacheStatus,
    latencyMs: log.latencyMs,
    usage: log.usage,
    cost: log.cost,
  } as RequestLog;
}

/** The fields of one log that analytics need, or undefined when analytics do not count it. */
function prepare(log: RequestLog): Prepared | undefined {
  if (log.source === "gateway" && !DATA_PLANE_ROUTES.has(log.route)) return undefined;
  const time = Date.parse(log.createdAt);
  if (!Number.isFinite(time)) return undefined;
  const workspace = log.workspaceId ?? NO_VALUE;
  return {
    log,
    org: log.organisationId,
    hour: hourBucket(time),
    day: dayBucket(time),
    hourExpiry: Math.floor(time / 1000) + HOURLY_RETENTION_DAYS * 86_400,
    dayExpiry: Math.floor(time / 1000) + DAILY_RETENTION_DAYS * 86_400,
    workspace,
    cell: { workspace, provider: log.provider ?? NO_VALUE, model: log.requestedModel ?? log.answeredModel ?? NO_VALUE },
    user: log.userId ?? log.metadata?._user,
    pairs: Object.entries(log.metadata ?? {})
      .filter(([key]) => key !== "_user")
      .slice(0, METADATA_PAIRS_PER_REQUEST),
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
