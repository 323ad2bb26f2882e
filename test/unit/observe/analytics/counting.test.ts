import { afterEach, describe, expect, it } from "vitest";
import {
  type CountingPlan,
  CountingError,
  countLogs,
  isCacheHit,
  runLimited,
} from "../../../../core/observe/analytics/counting.ts";
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
} from "../../../../core/observe/analytics/keys.ts";
import type { RequestLog } from "../../../../core/observe/logs/log-record.ts";
import { openDatabase } from "../../../../core/platform/local/sqlite.ts";
import { SqliteCounters } from "../../../../core/platform/local/sqlite-counters.ts";
import { SqliteRecords } from "../../../../core/platform/local/sqlite-records.ts";
import { WriteBatcher } from "../../../../core/platform/local/write-batcher.ts";
import { ROUTE_FAMILIES } from "../../../../core/routes/table.ts";
import {
  type CounterAddOptions,
  type Counters,
  type Records,
  StoreUnavailableError,
} from "../../../../core/store/ports.ts";

/**
 * countLogs sums a batch's deltas per cell group instead of log by log. It must give exactly what counting
 * log by log gave: `referenceCountLogs` below is that algorithm, kept as it was, and both run on random
 * batches against the local platform's counters (an in-memory SQLite database each).
 */

type Plan = CountingPlan;
const HOUR_MS = 3_600_000;

// ---- The reference: counting log by log, as countLogs did before it grouped logs. ----

const DATA_PLANE_ROUTES = new Set(
  ROUTE_FAMILIES.filter((family) => family.dataPlane).flatMap((family) => family.routes.map((route) => route.path)),
);

function referencePlanAdd(plan: Plan, key: string, amount: number, expiresAt: number): void {
  if (!amount) return;
  const entry = plan.adds.get(key);
  if (entry) entry.amount += amount;
  else plan.adds.set(key, { amount, expiresAt });
}

const referencePlan = (): Plan => ({ adds: new Map(), puts: new Map() });

class ReferenceCountingError extends Error {
  readonly applied: Array<[string, number, number]>;
  constructor(cause: unknown, applied: Array<[string, number, number]>) {
    super(`analytics counting failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.applied = applied;
  }
}

async function referenceSettle(writes: Array<() => Promise<unknown>>, applied: Array<[string, number, number]>) {
  const results = await runLimited(writes);
  const failure = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
  if (failure) throw new ReferenceCountingError(failure.reason, [...applied]);
}

interface ReferencePrepared {
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

function referencePrepare(log: RequestLog): ReferencePrepared | undefined {
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

interface ReferenceAdmission {
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
  onAdmit?: () => void;
}

async function referenceCountLogs(
  stores: { counters: Counters; records: Records },
  logs: RequestLog[],
  indexed: Set<string>,
): Promise<Plan> {
  const prepared = logs.map(referencePrepare).filter((entry): entry is ReferencePrepared => entry !== undefined);
  const plan = referencePlan();
  if (prepared.length === 0) return plan;
  const applied: Array<[string, number, number]> = [];
  const add = async (key: string, amount: number, expiresAt: number) => {
    const result = await stores.counters.add(key, amount, { expiresAt });
    applied.push([key, amount, expiresAt]);
    return result;
  };

  const round1 = referencePlan();
  for (const entry of prepared) {
    const { org, day, hour, workspace, user } = entry;
    referencePlanAdd(round1, cellKey(org, day, entry.cell, "n"), 1, entry.dayExpiry);
    if (user) {
      referencePlanAdd(round1, groupKey(org, day, workspace, "u", user, "n"), 1, entry.dayExpiry);
      referencePlanAdd(round1, groupKey(org, hour, workspace, "u", user, "n"), 1, entry.hourExpiry);
    }
    for (const [key, value] of entry.pairs)
      referencePlanAdd(round1, groupKey(org, day, workspace, `m:${key}`, value, "n"), 1, entry.dayExpiry);
  }
  const values = new Map<string, number>();
  await referenceSettle(
    [...round1.adds].map(([key, { amount, expiresAt }]) => async () => {
      values.set(key, (await add(key, amount, expiresAt)).value);
    }),
    applied,
  );
  const isNew = (key: string) => values.get(key) === round1.adds.get(key)?.amount;

  const admissions = new Map<string, ReferenceAdmission>();
  const admitted = new Map<string, boolean>();
  for (const entry of prepared) {
    const { org, day, workspace, user, cell } = entry;
    const indexPk = indexPartition(org, day.slice(1));
    const consider = (admission: Omit<ReferenceAdmission, "amount" | "expiresAt">) => {
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
        onAdmit: () => referencePlanAdd(plan, workspaceKey(org, day, workspace, "u"), 1, entry.dayExpiry),
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
  const index = (pk: string, parts: string[], ttl: number) => {
    const item = { pk, sk: indexSort(...parts), ttl };
    plan.puts.set(`${item.pk}\n${item.sk}`, item);
  };
  await referenceSettle(
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
  const nameOf = (key: string, name: string) => (admitted.get(key) === false ? OTHER : name);
  const newUserHours = new Set<string>();

  for (const entry of prepared) {
    const { log, org, hour, day, workspace, user, hourExpiry, dayExpiry } = entry;
    const cell =
      admitted.get(cellKey(org, day, entry.cell, "n")) === false
        ? { workspace, provider: OTHER, model: OTHER }
        : entry.cell;
    const costMicros = log.cost ? Math.round(log.cost * 1e6) : 0;
    const failed = log.status >= 400 || log.error !== undefined;
    const cacheHit = isCacheHit(log.cacheStatus);
    const latency = `l${latencyBucket(log.latencyMs)}`;
    const hourCell = cellPrefix(org, hour, cell);
    const dayCell = cellPrefix(org, day, cell);
    referencePlanAdd(plan, `${hourCell}n`, 1, hourExpiry);
    const both = (field: string, amount: number) => {
      referencePlanAdd(plan, hourCell + field, amount, hourExpiry);
      referencePlanAdd(plan, dayCell + field, amount, dayExpiry);
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
      const userHour = groupKey(org, hour, workspace, "u", user, "n");
      if (isNew(userHour) && !newUserHours.has(userHour)) {
        newUserHours.add(userHour);
        referencePlanAdd(plan, workspaceKey(org, hour, workspace, "u"), 1, hourExpiry);
      }
      const userName = nameOf(groupKey(org, day, workspace, "u", user, "n"), user);
      if (costMicros) referencePlanAdd(plan, groupKey(org, day, workspace, "u", userName, "c"), costMicros, dayExpiry);
    }
    if (!costMicros) continue;
    for (const [key, value] of entry.pairs) {
      const name = nameOf(groupKey(org, day, workspace, `m:${key}`, value, "n"), value);
      referencePlanAdd(plan, groupKey(org, day, workspace, `m:${key}`, name, "c"), costMicros, dayExpiry);
    }
  }
  return plan;
}

// ---- Stores: the local platform's counters on an in-memory database, every add recorded. ----

interface RecordedStores {
  counters: Counters;
  records: Records;
  /** Every add after the seeding, in call order: key, amount, options, and whether it failed. */
  calls: Array<[string, number, CounterAddOptions | undefined, boolean]>;
  /** The add (1-based, counted from the end of the seeding) that throws, if any. */
  failAt?: number;
  close(): void;
}

const opened: RecordedStores[] = [];
afterEach(() => {
  for (const stores of opened.splice(0)) stores.close();
});

function recordedStores(): RecordedStores {
  const db = openDatabase(":memory:");
  const writes = new WriteBatcher(db);
  const counters = new SqliteCounters(db, writes);
  const stores: RecordedStores = {
    calls: [],
    records: new SqliteRecords(db, writes),
    counters: {
      add: async (key, amount, options) => {
        const failing = stores.calls.length + 1 === stores.failAt;
        stores.calls.push([key, amount, options, failing]);
        if (failing) throw new StoreUnavailableError("test: counters are down");
        return counters.add(key, amount, options);
      },
      get: (key) => counters.get(key),
      getMany: (keys) => counters.getMany(keys),
      delete: (key) => counters.delete(key),
    },
    close: () => {
      writes.flush();
      db.close();
    },
  };
  opened.push(stores);
  return stores;
}

// ---- Random batches. ----

/** mulberry32: a small seeded generator, so a failing scenario can be run again by its number. */
function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const chance = (probability: number) => next() < probability;
  const int = (max: number) => Math.floor(next() * max);
  return { next, pick, chance, int };
}
type Random = ReturnType<typeof seeded>;

/** Today's UTC midnight: batches straddle it (and the hours around it), and expiries stay in the future. */
const MIDNIGHT = Math.floor(Date.now() / 86_400_000) * 86_400_000;

const ORGS = ["org_a", "org b|c"];
const WORKSPACES = [undefined, "ws_1", "ws/2"];
const PROVIDERS = [undefined, "openai", "anthropic", "*", OTHER];
const MODELS = [undefined, "gpt-4o", "claude|3", "*", OTHER];
const USERS = [undefined, "", "u1", "u2", "user 3", OTHER];
const METADATA_KEYS = ["env", "team", "_user", "k3", "k4", "k5", "k6", "k7", "k8", "k9"];
const METADATA_VALUES = ["prod", "dev", "a|b", OTHER, "u1"];
const LATENCIES = [0, 0.5, 1, 1.05, 1.1, 2, 250, Number.NaN, -3];

/** The values one batch draws from: a few (most local batches are one cell) or many. */
function batchShape(random: Random) {
  const subset = <T>(values: readonly T[]) => {
    if (random.chance(0.5)) return values;
    const chosen = values.filter(() => random.chance(0.4));
    return chosen.length > 0 ? chosen : [random.pick(values)];
  };
  return {
    orgs: subset(ORGS),
    workspaces: subset(WORKSPACES),
    providers: subset(PROVIDERS),
    models: subset(MODELS),
    users: subset(USERS),
    /** How far from midnight the logs are spread (0: all in one second). */
    spreadMs: random.pick([0, 1000, 20 * 60_000, 2.5 * HOUR_MS]),
    center: MIDNIGHT + random.pick([0, -30 * 60_000, HOUR_MS, -HOUR_MS, 10 * 60_000]),
  };
}

function randomLog(random: Random, shape: ReturnType<typeof batchShape>, id: number): RequestLog {
  const time = shape.center + Math.round((random.next() - 0.5) * 2 * shape.spreadMs);
  const metadata: Record<string, string> = {};
  const pairs = random.pick([0, 0, 1, 2, 3, 10]);
  for (let index = 0; index < pairs; index++) metadata[random.pick(METADATA_KEYS)] = random.pick(METADATA_VALUES);
  const requested = random.pick(shape.models);
  const source = random.chance(0.1) ? "custom" : "gateway";
  // Gateway logs of control-plane routes are not counted.
  const gatewayRoute = random.pick(["/v1/chat/completions", "/v1/embeddings", "/v1/chat/completions", "/v1/logs"]);
  const route = source === "custom" ? "custom" : gatewayRoute;
  return {
    id: `log_${id}`,
    createdAt: random.chance(0.02) ? "not a date" : new Date(time).toISOString(),
    traceId: `trace_${id}`,
    organisationId: random.pick(shape.orgs),
    workspaceId: random.pick(shape.workspaces),
    userId: random.chance(0.3) ? random.pick(shape.users) : undefined,
    metadata: pairs === 0 && random.chance(0.5) ? undefined : metadata,
    method: "POST",
    route,
    path: route,
    status: random.pick([200, 200, 200, 201, 400, 429, 500]),
    error: random.chance(0.05) ? { message: "boom", code: null } : undefined,
    provider: random.pick(shape.providers),
    requestedModel: requested,
    answeredModel: requested === undefined && random.chance(0.5) ? "answered-model" : undefined,
    cacheStatus: random.pick([
      undefined,
      undefined,
      "HIT",
      "hit_semantic",
      "MISS",
      "Semantic hit",
      "SEMANTIC HIT",
      "SEMANTIC MISS",
    ]),
    latencyMs: random.chance(0.2) ? random.pick(LATENCIES) : random.next() * random.pick([50, 2000, 60_000]),
    usage: random.chance(0.2)
      ? undefined
      : {
          promptTokens: random.pick([0, 1 + random.int(4000), 0.1 + random.int(5)]),
          completionTokens: random.pick([0, 1 + random.int(800)]),
          totalTokens: 0,
          estimated: false,
        },
    cost: random.pick([undefined, 0, 1e-9, random.next() * 0.01, random.next() * 0.01, 12_345.678, -0.25]),
    source,
  };
}

/** Pre-existing state: some workspaces at (or one below) a cap, so round 2 refuses values into `other`. */
async function seedCaps(random: Random, counters: Counters[]): Promise<void> {
  const expiresAt = Math.floor(MIDNIGHT / 1000) + DAILY_RETENTION_DAYS * 86_400;
  for (const org of ORGS) {
    for (const workspace of WORKSPACES) {
      for (const day of [dayBucket(MIDNIGHT - 1), dayBucket(MIDNIGHT)]) {
        for (const [dimension, cap] of [
          ["cells", CELL_CAP],
          ["users", USER_CAP],
          ["metadata", METADATA_CAP],
        ] as const) {
          if (!random.chance(0.25)) continue;
          const value = cap - random.int(3);
          const key = distinctKey(org, day, workspace ?? NO_VALUE, dimension);
          for (const store of counters) await store.add(key, value, { expiresAt });
        }
      }
    }
  }
}

type Outcome =
  | { adds: Array<[string, { amount: number; expiresAt: number }]>; puts: Array<[string, unknown]> }
  | { error: string; applied: Array<[string, number, number]> };

/** A plan (in key order: a plan's order means nothing) or the failure and what it applied. */
async function outcome(count: () => Promise<Plan>): Promise<Outcome> {
  try {
    const plan = await count();
    const byKey = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    return { adds: [...plan.adds].sort(byKey), puts: [...plan.puts].sort(byKey) };
  } catch (error) {
    if (!(error instanceof CountingError || error instanceof ReferenceCountingError)) throw error;
    return { error: error.message, applied: error.applied };
  }
}

describe("countLogs", () => {
  it("gives exactly the plan, counter writes and failures of counting log by log, on random batches", async () => {
    let batches = 0;
    /** The rare paths the scenarios must reach, or the comparison proves little. */
    const reached = { failures: 0, refusals: 0, admissions: 0, emptiedIndexMemory: 0 };
    for (let scenario = 1; scenario <= 150; scenario++) {
      const random = seeded(scenario);
      const reference = recordedStores();
      const current = recordedStores();
      await seedCaps(random, [reference.counters, current.counters]);
      // Now and then a write of rounds 1 and 2 fails (the same one for both: their writes come in one order).
      if (random.chance(0.2)) reference.failAt = current.failAt = 1 + random.int(60);
      // The latency index memory, sometimes about to be emptied (past 50 000 entries) in the middle of a batch.
      const remembered = random.chance(0.05) ? Array.from({ length: 50_001 - random.int(5) }, (_, i) => `x${i}`) : [];
      const referenceIndexed = new Set(remembered);
      const currentIndexed = new Set(remembered);
      const count = 1 + random.int(3);
      for (let batch = 0; batch < count; batch++, batches++) {
        const shape = batchShape(random);
        const size = random.pick([1, 2, 10, 50, 200, 300]);
        const logs = Array.from({ length: size }, (_, index) => randomLog(random, shape, index));
        const expected = await outcome(() => referenceCountLogs(reference, logs, referenceIndexed));
        const actual = await outcome(() => countLogs(current, logs, currentIndexed));
        expect(actual, `scenario ${scenario}, batch ${batch}`).toEqual(expected);
        if ("error" in expected) reached.failures++;
      }
      expect(current.calls, `scenario ${scenario}`).toEqual(reference.calls);
      expect([...currentIndexed], `scenario ${scenario}`).toEqual([...referenceIndexed]);
      reached.refusals += reference.calls.filter(([, amount]) => amount < 0).length;
      reached.admissions += reference.calls.filter(([, , options]) => options?.ceiling !== undefined).length;
      if (remembered.length > 0 && referenceIndexed.size < remembered.length) reached.emptiedIndexMemory++;
    }
    expect(batches).toBeGreaterThan(250);
    for (const [path, times] of Object.entries(reached)) expect(times, path).toBeGreaterThan(0);
  });
});
