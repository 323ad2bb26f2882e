import type { Counters, Records } from "../../store/ports.ts";
import {
  ALL,
  type Cell,
  HOURLY_RETENTION_DAYS,
  cellKey,
  dayBucket,
  groupKey,
  hourBucket,
  indexPartition,
  parseIndexSort,
  percentiles,
  workspaceKey,
} from "./keys.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Ranges up to this long are answered in hours, longer ones in days. */
const HOURLY_RANGE_MS = 2 * DAY_MS;

export interface AnalyticsFilter {
  organisationId: string;
  from: number;
  to: number;
  /** Only this workspace (workspace keys always have one). */
  workspaceId?: string;
  model?: string;
  provider?: string;
}

interface DayIndex {
  cells: Cell[];
  latency: Map<string, number[]>;
  users: Array<{ workspace: string; user: string }>;
  metadata: Array<{ workspace: string; key: string; value: string }>;
  guardrails: Array<{ workspace: string; id: string }>;
  workspaces: Set<string>;
}

/** One guardrail's counts over a time range (or one day): runs, failures, denials, checks and time spent. */
export interface GuardrailTotals {
  runs: number;
  failed: number;
  denied: number;
  checksRun: number;
  checksFailed: number;
  /** Time the guardrail's runs took, summed, in µs. */
  timeMicros: number;
}

const GUARDRAIL_FIELDS: Record<string, keyof GuardrailTotals> = {
  n: "runs",
  f: "failed",
  d: "denied",
  k: "checksRun",
  x: "checksFailed",
  t: "timeMicros",
};

export const emptyGuardrailTotals = (): GuardrailTotals => ({
  runs: 0,
  failed: 0,
  denied: 0,
  checksRun: 0,
  checksFailed: 0,
  timeMicros: 0,
});

export interface Totals {
  requests: number;
  errors: number;
  costMicros: number;
  promptTokens: number;
  completionTokens: number;
  cacheHits: number;
  /** Micro-dollars that cache hits saved (what the cached answers cost when made). */
  cacheSavedMicros: number;
  latency: Map<number, number>;
  users: number;
  feedbackCount: number;
  feedbackWeighted: number;
  feedbackWeight: number;
}

const emptyTotals = (): Totals => ({
  requests: 0,
  errors: 0,
  costMicros: 0,
  promptTokens: 0,
  completionTokens: 0,
  cacheHits: 0,
  cacheSavedMicros: 0,
  latency: new Map(),
  users: 0,
  feedbackCount: 0,
  feedbackWeighted: 0,
  feedbackWeight: 0,
});

export type Metric = "requests" | "cost" | "tokens" | "latency" | "errors" | "cache" | "users" | "feedback";

/** Which counter fields a metric needs (so a graph reads only those). */
const METRIC_FIELDS: Record<Metric, string[]> = {
  requests: ["n"],
  cost: ["n", "c"],
  tokens: ["p", "o"],
  latency: ["l"],
  errors: ["n", "e"],
  cache: ["n", "h", "s"],
  users: ["u"],
  feedback: ["fn", "fv", "fw"],
};

/**
 * Reads the aggregates of core/observe/analytics/recorder.ts: per time bucket (hour for ranges up to 2 days within
 * the hourly retention, else whole UTC days), for the cells that match the filter. Reads per day one index
 * query, then one getMany of (buckets x matching cells x fields of the metric) counters.
 */
export class AnalyticsReader {
  private readonly counters: Counters;
  private readonly records: Records;

  constructor(counters: Counters, records: Records) {
    this.counters = counters;
    this.records = records;
  }

  resolution(filter: AnalyticsFilter): "hour" | "day" {
    const recent = filter.from >= Date.now() - (HOURLY_RETENTION_DAYS - 1) * DAY_MS;
    return filter.to - filter.from <= HOURLY_RANGE_MS && recent ? "hour" : "day";
  }

  /** The buckets of the range with totals for the metrics asked. */
  async series(
    filter: AnalyticsFilter,
    metrics: Metric[],
  ): Promise<{ resolution: "hour" | "day"; buckets: Array<{ start: number; totals: Totals }> }> {
    const resolution = this.resolution(filter);
    const step = resolution === "hour" ? HOUR_MS : DAY_MS;
    const starts: number[] = [];
    for (let start = Math.floor(filter.from / step) * step; start <= filter.to; start += step) starts.push(start);
    const indexes = await this.dayIndexes(filter);
    const fields = new Set(metrics.flatMap((metric) => METRIC_FIELDS[metric]));
    const keys: Array<{ key: string; bucket: number; field: string; latency?: number }> = [];
    starts.forEach((start, position) => {
      const bucket = resolution === "hour" ? hourBucket(start) : dayBucket(start);
      const index = indexes.get(dayBucket(start).slice(1));
      if (!index) return;
      for (const cell of index.cells) {
        for (const field of fields) {
          if (field === "l") {
            for (const latency of index.latency.get(cellId(cell)) ?? []) {
              keys.push({
                key: cellKey(filter.organisationId, bucket, cell, `l${latency}`),
                bucket: position,
                field,
                latency,
              });
            }
          } else if (!field.startsWith("f") && field !== "u") {
            keys.push({ key: cellKey(filter.organisationId, bucket, cell, field), bucket: position, field });
          }
        }
      }
      for (const workspace of index.workspaces) {
        for (const field of fields) {
          if (field.startsWith("f") || field === "u")
            keys.push({ key: workspaceKey(filter.organisationId, bucket, workspace, field), bucket: position, field });
        }
      }
    });
    const values = await this.read(keys.map((entry) => entry.key));
    const buckets = starts.map((start) => ({ start, totals: emptyTotals() }));
    for (const entry of keys) {
      const value = values.get(entry.key) ?? 0;
      if (!value) continue;
      add(buckets[entry.bucket]!.totals, entry.field, value, entry.latency);
    }
    return { resolution, buckets };
  }

  /** Distinct users of the range (from the day index). */
  async distinctUsers(filter: AnalyticsFilter): Promise<number> {
    const indexes = await this.dayIndexes(filter);
    const users = new Set<string>();
    for (const index of indexes.values()) for (const { user } of index.users) users.add(user);
    return users.size;
  }

  /**
   * Per-group totals over the days of the range, biggest first. `model`, `provider` and `workspace` come from
   * the cells (requests, errors, cost, tokens); `user` and `metadata` from their daily group counters
   * (requests, cost).
   */
  async groups(
    filter: AnalyticsFilter,
    group: "model" | "provider" | "workspace" | "user" | "metadata",
    metadataKey?: string,
  ) {
    const indexes = await this.dayIndexes(filter);
    const org = filter.organisationId;
    const keys: Array<{ key: string; name: string; field: string }> = [];
    for (const [day, index] of indexes) {
      const bucket = `d${day}`;
      if (group === "user") {
        for (const { workspace, user } of index.users)
          for (const field of ["n", "c"])
            keys.push({ key: groupKey(org, bucket, workspace, "u", user, field), name: user, field });
      } else if (group === "metadata") {
        for (const { workspace, key, value } of index.metadata) {
          if (key !== metadataKey) continue;
          for (const field of ["n", "c"])
            keys.push({ key: groupKey(org, bucket, workspace, `m:${key}`, value, field), name: value, field });
        }
      } else {
        for (const cell of index.cells) {
          for (const field of ["n", "e", "c", "p", "o"])
            keys.push({ key: cellKey(org, bucket, cell, field), name: cell[group], field });
        }
      }
    }
    const values = await this.read(keys.map((entry) => entry.key));
    const byName = new Map<string, Totals>();
    for (const entry of keys) {
      const value = values.get(entry.key) ?? 0;
      if (!value) continue;
      const totals = byName.get(entry.name) ?? emptyTotals();
      byName.set(entry.name, totals);
      add(totals, entry.field, value);
    }
    return [...byName]
      .filter(([, totals]) => totals.requests > 0)
      .sort((a, b) => b[1].requests - a[1].requests || a[0].localeCompare(b[0]));
  }

  /**
   * Guardrail counts of the range, from their daily group counters (per workspace; the model and provider
   * filters do not apply): per guardrail id (`other` past the daily cap), and per day.
   */
  async guardrails(
    filter: AnalyticsFilter,
  ): Promise<{ byGuardrail: Map<string, GuardrailTotals>; byDay: Map<string, GuardrailTotals> }> {
    const indexes = await this.dayIndexes(filter);
    const org = filter.organisationId;
    const keys: Array<{ key: string; id: string; day: string; field: keyof GuardrailTotals }> = [];
    for (const [day, index] of indexes) {
      for (const { workspace, id } of index.guardrails) {
        for (const [field, name] of Object.entries(GUARDRAIL_FIELDS))
          keys.push({ key: groupKey(org, `d${day}`, workspace, "g", id, field), id, day, field: name });
      }
    }
    const values = await this.read(keys.map((entry) => entry.key));
    const byGuardrail = new Map<string, GuardrailTotals>();
    const byDay = new Map<string, GuardrailTotals>();
    const totalsIn = (map: Map<string, GuardrailTotals>, name: string) => {
      let totals = map.get(name);
      if (!totals) {
        totals = emptyGuardrailTotals();
        map.set(name, totals);
      }
      return totals;
    };
    for (const entry of keys) {
      const value = values.get(entry.key) ?? 0;
      if (!value) continue;
      totalsIn(byGuardrail, entry.id)[entry.field] += value;
      totalsIn(byDay, entry.day)[entry.field] += value;
    }
    return { byGuardrail, byDay };
  }

  private async read(keys: string[]): Promise<Map<string, number>> {
    const values = new Map<string, number>();
    for (let start = 0; start < keys.length; start += 500) {
      for (const [key, value] of await this.counters.getMany(keys.slice(start, start + 500))) values.set(key, value);
    }
    return values;
  }

  /** The index of each UTC day of the range, filtered to the cells that match. */
  private async dayIndexes(filter: AnalyticsFilter): Promise<Map<string, DayIndex>> {
    const days: string[] = [];
    for (let start = Math.floor(filter.from / DAY_MS) * DAY_MS; start <= filter.to; start += DAY_MS)
      days.push(dayBucket(start).slice(1));
    const result = new Map<string, DayIndex>();
    await Promise.all(
      days.map(async (day) => {
        const index: DayIndex = {
          cells: [],
          latency: new Map(),
          users: [],
          metadata: [],
          guardrails: [],
          workspaces: new Set(),
        };
        let cursor: string | undefined;
        do {
          const page = await this.records.query({
            partition: indexPartition(filter.organisationId, day),
            limit: 1000,
            cursor,
          });
          for (const item of page.items) {
            const [kind, workspace, ...rest] = parseIndexSort(item.sk);
            if (!workspace || (filter.workspaceId && workspace !== filter.workspaceId)) continue;
            if (kind === "w") index.workspaces.add(workspace);
            else if (kind === "u") index.users.push({ workspace, user: rest[0]! });
            else if (kind === "m") index.metadata.push({ workspace, key: rest[0]!, value: rest[1]! });
            else if (kind === "g") index.guardrails.push({ workspace, id: rest[0]! });
            else if (kind === "c" || kind === "l") {
              const cell: Cell = { workspace, provider: rest[0]!, model: rest[1]! };
              if (filter.provider && cell.provider !== filter.provider) continue;
              if (filter.model && cell.model !== filter.model) continue;
              if (kind === "c") index.cells.push(cell);
              else {
                const list = index.latency.get(cellId(cell)) ?? [];
                list.push(Number(rest[2]));
                index.latency.set(cellId(cell), list);
              }
            }
          }
          cursor = page.cursor;
        } while (cursor);
        result.set(day, index);
      }),
    );
    return result;
  }
}

const cellId = (cell: Cell) => `${cell.workspace}\n${cell.provider}\n${cell.model}`;

function add(totals: Totals, field: string, value: number, latency?: number): void {
  switch (field) {
    case "n":
      totals.requests += value;
      break;
    case "e":
      totals.errors += value;
      break;
    case "c":
      totals.costMicros += value;
      break;
    case "p":
      totals.promptTokens += value;
      break;
    case "o":
      totals.completionTokens += value;
      break;
    case "h":
      totals.cacheHits += value;
      break;
    case "s":
      totals.cacheSavedMicros += value;
      break;
    case "u":
      totals.users += value;
      break;
    case "fn":
      totals.feedbackCount += value;
      break;
    case "fv":
      totals.feedbackWeighted += value / 1e6;
      break;
    case "fw":
      totals.feedbackWeight += value / 1e6;
      break;
    case "l":
      totals.latency.set(latency!, (totals.latency.get(latency!) ?? 0) + value);
      break;
  }
}

export function mergeTotals(into: Totals, from: Totals): Totals {
  for (const key of [
    "requests",
    "errors",
    "costMicros",
    "promptTokens",
    "completionTokens",
    "cacheHits",
    "cacheSavedMicros",
    "users",
    "feedbackCount",
    "feedbackWeighted",
    "feedbackWeight",
  ] as const) {
    into[key] += from[key];
  }
  for (const [bucket, count] of from.latency) into.latency.set(bucket, (into.latency.get(bucket) ?? 0) + count);
  return into;
}

export { emptyTotals, percentiles, ALL };
