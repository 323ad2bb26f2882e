import type { GuardrailVerdict } from "../../inference/guardrails/types.ts";
import type { RequestLog } from "../logs/log-record.ts";
import { COUNTED_ROUTES } from "./counted-routes.ts";
import {
  type Cell,
  DAILY_RETENTION_DAYS,
  HOURLY_RETENTION_DAYS,
  METADATA_PAIRS_PER_REQUEST,
  NO_VALUE,
  OTHER,
  cellPrefix,
  dayBucket,
  groupKey,
  hourBucket,
  hourNumber,
  indexPartition,
} from "./keys.ts";

/**
 * A batch of request logs as core/observe/analytics/counting.ts counts them: each counted log with the keys it
 * counts into, grouped by organisation, hour and cell (CellGroup), and round 3's sums per cell (CellSums).
 */

/** A counter delta: the amount, and the expiry the counter gets if the add creates it. */
export interface CounterDelta {
  amount: number;
  expiresAt: number;
}

/** One counted log of a batch, with the keys it shares with the other logs of its group. */
export interface Prepared {
  log: RequestLog;
  group: CellGroup;
  hourExpiry: number;
  dayExpiry: number;
  user?: UserKeys;
  pairs: PairKeys[];
  guardrails: Array<{ keys: GuardrailKeys; verdict: GuardrailVerdict }>;
}

/** A user's round-1 counters; `cost` is its daily cost counter, named once round 2 has admitted it or not. */
export interface UserKeys {
  name: string;
  day: string;
  hour: string;
  cost?: string;
}

/** A metadata pair's round-1 counter; `cost` is its daily cost counter, named once round 2 has decided. */
export interface PairKeys {
  key: string;
  value: string;
  dimension: string;
  count: string;
  cost?: string;
}

/** A guardrail's round-1 counter (its runs today); `fields` is its daily keys' prefix, named once round 2 has decided. */
export interface GuardrailKeys {
  id: string;
  count: string;
  fields?: string;
}

/** A latency index entry: the key `indexed` remembers it by, and its sort key's parts. */
interface LatencyIndexEntry {
  seenKey: string;
  parts: string[];
}

/** Where round 3 counts a group: its cell, or its workspace's `other` cell when round 2 refused the cell. */
export interface CountedCell {
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
export class CellGroup {
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
export class CellSums {
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
  writeTo(adds: Map<string, CounterDelta>): void {
    for (const [field, sum] of this.fields) adds.set(this.prefix + field, sum);
    for (const [bucket, sum] of this.latency) adds.set(`${this.prefix}l${bucket}`, sum);
  }
}

/** Where round 3 counts a group: the `other` cell of its workspace when its cell was refused by the cap. */
export function countedCell(group: CellGroup, refused: boolean, sums: Map<string, CellSums>): CountedCell {
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
export function prepareBatch(logs: RequestLog[]): { prepared: Prepared[]; groups: CellGroup[] } {
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
  if (log.source === "gateway" && !COUNTED_ROUTES.has(log.route)) return undefined;
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
