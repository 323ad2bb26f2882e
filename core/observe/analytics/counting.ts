import type { GuardrailVerdict } from "../../inference/guardrails/types.ts";
import type { RequestLog } from "../logs/log-record.ts";
import { ROUTE_FAMILIES } from "../../routes/table.ts";
import type { Counters, RecordItem, Records } from "../../store/ports.ts";
import {
  CELL_CAP,
  type Cell,
  DAILY_RETENTION_DAYS,
  GUARDRAIL_CAP,
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
  hourNumber,
  indexPartition,
  indexSort,
  latencyBucket,
  workspaceKey,
} from "./keys.ts";

/**
 * Analytics count inference traffic: routes of data-plane families, inference routes of other families (a saved
 * prompt's completions), and custom logs; not control-plane calls.
 */
const DATA_PLANE_ROUTES = new Set(
  ROUTE_FAMILIES.flatMap((family) =>
    family.routes.filter((route) => family.dataPlane || route.inference).map((route) => route.path),
  ),
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

/** One counted log of a batch, with the keys it shares with the other logs of its group. */
interface Prepared {
  log: RequestLog;
  group: CellGroup;
  hourExpiry: number;
  dayExpiry: number;
  user?: UserKeys;
  pairs: PairKeys[];
  guardrails: Array<{ keys: GuardrailKeys; verdict: GuardrailVerdict }>;
}

/** A user's round-1 counters; `cost` is its daily cost counter, named once round 2 has admitted it or not. */
interface UserKeys {
  name: string;
  day: string;
  hour: string;
  cost?: string;
}

/** A metadata pair's round-1 counter; `cost` is its daily cost counter, named once round 2 has decided. */
interface PairKeys {
  key: string;
  value: string;
  dimension: string;
  count: string;
  cost?: string;
}

/** A guardrail's round-1 counter (its runs today); `fields` is its daily keys' prefix, named once round 2 has decided. */
interface GuardrailKeys {
  id: string;
  count: string;
  fields?: string;
}

/** A latency index entry: the key `indexed` remembers it by, and its sort key's parts. */
interface LatencyIndexEntry {
  seenKey: string;
  parts: string[];
}

/**
 * HIT and SEMANTIC HIT (x-gateway-cache-status) are hits, as are the spellings custom logs use (`hit_semantic`);
 * MISS, SEMANTIC MISS, REFRESH and DISABLED are not.
 */
export function isCacheHit(status: string | undefined): boolean {
  return status !== undefined && /^(hit|semantic[ _-]?hit$)/i.test(status);
}

/** Where round 3 counts a group: its cell, or its workspace's `other` cell when round 2 refused the cell. */
interface CountedCell {
  cell: Cell;
  hour: CellSums;
  day: CellSums;
  latencyIndex: Map<number, LatencyIndexEntry>;
}

const NO_PAIRS: PairKeys[] = [];
const NO_GUARDRAILS: Prepared["guardrails"] = [];

/**
 * The logs of a batch that share organisation, hour and cell (a local batch is often a single group): the
 * keys they have in common are built once per group instead of once (or several times) per log.
 */
class CellGroup {
  readonly org: string;
  readonly hourNumber: number;
  readonly hour: string;
  readonly day: string;
  readonly cell: Cell;
  /** The cell's hourly keys without their field; also the group's identity in the batch. */
  readonly hourPrefix: string;
  readonly dayPrefix: string;
  /** Round 1's daily count of the cell: its admission decides whether the cell is counted as itself. */
  readonly dayCountKey: string;
  readonly indexPk: string;
  /** Set before round 3. */
  counted?: CountedCell;
  private readonly users = new Map<string, UserKeys>();
  private readonly pairs = new Map<string, Map<string, PairKeys>>();
  private readonly guardrails = new Map<string, GuardrailKeys>();

  constructor(org: string, time: number, cell: Cell, hourPrefix: string) {
    this.org = org;
    this.hourNumber = hourNumber(time);
    this.hour = hourBucket(time);
    this.day = dayBucket(time);
    this.cell = cell;
    this.hourPrefix = hourPrefix;
    this.dayPrefix = cellPrefix(org, this.day, cell);
    this.dayCountKey = `${this.dayPrefix}n`;
    this.indexPk = indexPartition(org, this.day.slice(1));
  }

  holds(org: string, hour: number, workspace: string, provider: string, model: string): boolean {
    const { cell } = this;
    return (
      this.hourNumber === hour &&
      this.org === org &&
      cell.workspace === workspace &&
      cell.provider === provider &&
      cell.model === model
    );
  }

  userKeys(name: string): UserKeys {
    let keys = this.users.get(name);
    if (!keys) {
      const { org, day, hour } = this;
      const { workspace } = this.cell;
      keys = {
        name,
        day: groupKey(org, day, workspace, "u", name, "n"),
        hour: groupKey(org, hour, workspace, "u", name, "n"),
      };
      this.users.set(name, keys);
    }
    return keys;
  }

  /** The counted pairs of a log's metadata (`_user` names the user; pairs past the limit are ignored). */
  pairKeysOf(metadata: Record<string, string>): PairKeys[] {
    return Object.entries(metadata)
      .filter(([key]) => key !== "_user")
      .slice(0, METADATA_PAIRS_PER_REQUEST)
      .map(([key, value]) => this.pairKeys(key, value));
  }

  private pairKeys(key: string, value: string): PairKeys {
    let values = this.pairs.get(key);
    if (!values) {
      values = new Map();
      this.pairs.set(key, values);
    }
    let keys = values.get(value);
    if (!keys) {
      const dimension = `m:${key}`;
      keys = { key, value, dimension, count: groupKey(this.org, this.day, this.cell.workspace, dimension, value, "n") };
      values.set(value, keys);
    }
    return keys;
  }

  /** The counted guardrail verdicts of a log (async ones included), each with its guardrail's keys. */
  guardrailsOf(verdicts: readonly GuardrailVerdict[]): Prepared["guardrails"] {
    return verdicts
      .filter((verdict) => typeof verdict?.id === "string")
      .map((verdict) => {
        let keys = this.guardrails.get(verdict.id);
        if (!keys) {
          keys = { id: verdict.id, count: groupKey(this.org, this.day, this.cell.workspace, "g", verdict.id, "n") };
          this.guardrails.set(verdict.id, keys);
        }
        return { keys, verdict };
      });
  }

  latencyIndexEntry(bucket: number): LatencyIndexEntry {
    const { cell, latencyIndex } = this.counted!;
    let entry = latencyIndex.get(bucket);
    if (!entry) {
      const dayIndex = this.day.slice(1);
      const parts = ["l", cell.workspace, cell.provider, cell.model, String(bucket)];
      entry = { seenKey: `${this.org}|${dayIndex}|${parts.join("|")}`, parts };
      latencyIndex.set(bucket, entry);
    }
    return entry;
  }
}

/**
 * Round 3's deltas of one cell and bucket (hour or day), summed per field in log order: the same sums and
 * first expiries as adding log by log, with one plan entry per field however many logs the batch has.
 */
class CellSums {
  readonly prefix: string;
  private readonly fields = new Map<string, CounterDelta>();
  /** Per latency bucket, by number: no field name to build per log. */
  private readonly latency = new Map<number, CounterDelta>();

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  add(field: string, amount: number, expiresAt: number): void {
    if (!amount) return;
    const sum = this.fields.get(field);
    if (sum) sum.amount += amount;
    else this.fields.set(field, { amount, expiresAt });
  }

  addLatency(bucket: number, expiresAt: number): void {
    const sum = this.latency.get(bucket);
    if (sum) sum.amount += 1;
    else this.latency.set(bucket, { amount: 1, expiresAt });
  }

  /**
   * Set, not summed: a key has one CellSums (one per prefix), and the rest of the plan writes no cell field
   * but `u` (distinct users), which CellSums never holds.
   */
  writeTo(plan: CountingPlan): void {
    for (const [field, sum] of this.fields) plan.adds.set(this.prefix + field, sum);
    for (const [bucket, sum] of this.latency) plan.adds.set(`${this.prefix}l${bucket}`, sum);
  }
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
 * Logs of one organisation, hour and cell share a CellGroup, so their common keys are built once.
 */
export async function countLogs(
  stores: { counters: Counters; records: Records },
  logs: RequestLog[],
  indexed: Set<string> = new Set(),
): Promise<CountingPlan> {
  const { prepared, groups } = prepareBatch(logs);
  const plan = emptyPlan();
  if (prepared.length === 0) return plan;
  const applied: Array<[string, number, number]> = [];
  const add = async (key: string, amount: number, expiresAt: number) => {
    const result = await stores.counters.add(key, amount, { expiresAt });
    applied.push([key, amount, expiresAt]);
    return result;
  };

  // Round 1: the daily counts that also tell whether a value is new today (added in log order).
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
  await settle(
    [...round1.adds].map(([key, { amount, expiresAt }]) => async () => {
      values.set(key, (await add(key, amount, expiresAt)).value);
    }),
    applied,
  );
  /** True when the counter was 0 before this group's sum. */
  const isNew = (key: string) => values.get(key) === round1.adds.get(key)?.amount;

  // Round 2 (rare): admit new values under the caps and index them, in the order their logs come.
  const admissions = new Map<string, Admission>();
  const admitted = new Map<string, boolean>();
  /** Describes an admission only for a key new today and not yet considered (most keys are neither). */
  const consider = (key: string, describe: () => Omit<Admission, "key" | "amount" | "expiresAt">) => {
    if (admissions.has(key) || !isNew(key)) return;
    const { amount, expiresAt } = round1.adds.get(key)!;
    admissions.set(key, { key, amount, expiresAt, ...describe() });
  };
  // Usually no value is new today, and then there is nothing to consider.
  if ([...round1.adds.keys()].some(isNew)) {
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

  // Round 3: everything else, into the plan. Cell counters are summed in CellSums and set once each; user and
  // metadata costs (named per log) are added log by log.
  const sums = new Map<string, CellSums>();
  for (const group of groups) group.counted = countedCell(group, admitted.get(group.dayCountKey) === false, sums);
  for (const entry of prepared) {
    const { log, group, user, hourExpiry, dayExpiry } = entry;
    const { hour, day } = group.counted!;
    const costMicros = log.cost ? Math.round(log.cost * 1e6) : 0;
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
      index(group.indexPk, latencyIndex.parts, dayExpiry);
    }
    if (user) {
      // A user new this hour counts once into the workspace's distinct users of the hour (admitted or not).
      if (isNew(user.hour) && !newUserHours.has(user.hour)) {
        newUserHours.add(user.hour);
        planAdd(plan, workspaceKey(group.org, group.hour, group.cell.workspace, "u"), 1, hourExpiry);
      }
      if (costMicros) {
        user.cost ??= groupKey(group.org, group.day, group.cell.workspace, "u", nameOf(user.day, user.name), "c");
        planAdd(plan, user.cost, costMicros, dayExpiry);
      }
    }
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
    if (!costMicros) continue;
    for (const pair of entry.pairs) {
      const name = nameOf(pair.count, pair.value);
      pair.cost ??= groupKey(group.org, group.day, group.cell.workspace, pair.dimension, name, "c");
      planAdd(plan, pair.cost, costMicros, dayExpiry);
    }
  }
  for (const cellSums of sums.values()) cellSums.writeTo(plan);
  return plan;
}

/** Where round 3 counts a group: the `other` cell of its workspace when its cell was refused by the cap. */
function countedCell(group: CellGroup, refused: boolean, sums: Map<string, CellSums>): CountedCell {
  const cell = refused ? { workspace: group.cell.workspace, provider: OTHER, model: OTHER } : group.cell;
  const hourPrefix = refused ? cellPrefix(group.org, group.hour, cell) : group.hourPrefix;
  const dayPrefix = refused ? cellPrefix(group.org, group.day, cell) : group.dayPrefix;
  return { cell, hour: sumsOf(sums, hourPrefix), day: sumsOf(sums, dayPrefix), latencyIndex: new Map() };
}

/** Groups refused into the same `other` cell (or hours of one day) share their CellSums. */
function sumsOf(sums: Map<string, CellSums>, prefix: string): CellSums {
  let cellSums = sums.get(prefix);
  if (!cellSums) {
    cellSums = new CellSums(prefix);
    sums.set(prefix, cellSums);
  }
  return cellSums;
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
    cacheSavedCost: log.cacheSavedCost,
    latencyMs: log.latencyMs,
    usage: log.usage,
    cost: log.cost,
    guardrails: log.guardrails,
  } as RequestLog;
}

/**
 * The logs analytics count, each with its CellGroup (consecutive logs of one group, the usual case, find it
 * without building a key), and the groups in the order their first logs come.
 */
function prepareBatch(logs: RequestLog[]): { prepared: Prepared[]; groups: CellGroup[] } {
  const prepared: Prepared[] = [];
  const groups = new Map<string, CellGroup>();
  let last: CellGroup | undefined;
  for (const log of logs) {
    // One log that cannot be counted (whatever its values) is skipped: the batch holds every tenant's logs.
    try {
      const entry = prepareLog(log, groups, last);
      if (!entry) continue;
      groups.set(entry.group.hourPrefix, entry.group);
      prepared.push(entry);
      last = entry.group;
    } catch (error) {
      console.error(`analytics: a log of ${log.organisationId} could not be counted and is skipped`, error);
    }
  }
  return { prepared, groups: [...groups.values()] };
}

/** A log's counted keys; its group is found or made but not registered (the caller does, on success). */
function prepareLog(
  log: RequestLog,
  groups: Map<string, CellGroup>,
  last: CellGroup | undefined,
): Prepared | undefined {
  if (log.source === "gateway" && !DATA_PLANE_ROUTES.has(log.route)) return undefined;
  const time = Date.parse(log.createdAt);
  if (!Number.isFinite(time)) return undefined;
  const org = log.organisationId;
  const workspace = log.workspaceId ?? NO_VALUE;
  const provider = log.provider ?? NO_VALUE;
  const model = log.requestedModel ?? log.answeredModel ?? NO_VALUE;
  let group = last;
  if (!group?.holds(org, hourNumber(time), workspace, provider, model)) {
    const cell = { workspace, provider, model };
    const hourPrefix = cellPrefix(org, hourBucket(time), cell);
    group = groups.get(hourPrefix) ?? new CellGroup(org, time, cell, hourPrefix);
  }
  const user = log.userId ?? log.metadata?._user;
  return {
    log,
    group,
    hourExpiry: Math.floor(time / 1000) + HOURLY_RETENTION_DAYS * 86_400,
    dayExpiry: Math.floor(time / 1000) + DAILY_RETENTION_DAYS * 86_400,
    user: user ? group.userKeys(user) : undefined,
    pairs: log.metadata ? group.pairKeysOf(log.metadata) : NO_PAIRS,
    guardrails: Array.isArray(log.guardrails) ? group.guardrailsOf(log.guardrails) : NO_GUARDRAILS,
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
