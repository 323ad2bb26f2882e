import type { RequestLog } from "../logs/log-record.ts";
import { ROUTE_FAMILIES } from "../routes/table.ts";
import type { Counters, Records } from "../store/ports.ts";
import { PendingCounters } from "./pending-counters.ts";
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

/**
 * Precomputes the analytics aggregates as each request log is written (RequestLogger observer, so after the
 * response and off the request path). Counter adds of one request, all issued in parallel per round:
 * - round 1: the daily request count of the request's cell, and (when present) the user's daily and hourly
 *   request counts and each metadata pair's daily count: 1 + 2 (user) + 1 per metadata pair;
 * - round 2, only the first time a cell / user / metadata value appears in a day: one capped add to the
 *   distinct counter and one index record (plus an undo and an `other` add when the cap is reached);
 * - round 3: the hourly request count, prompt and completion tokens (hourly and daily, when usage is known),
 *   cost (hourly and daily, when priced), errors and cache hits (hourly and daily, when they apply), the
 *   latency bucket (hourly and daily), the user's daily cost and each metadata pair's daily cost. These need
 *   no result, so they are summed in memory (PendingCounters) and written once per flush interval per
 *   counter (locally every second; on Lambda at once).
 * So locally a request costs 1 add (plus 2 per user and 1 per metadata pair) and its share of the flushed
 * totals; on Lambda a priced chat request with usage and no user or metadata still costs 10 adds.
 */
export class AnalyticsRecorder {
  private readonly counters: Counters;
  private readonly records: Records;
  /** Round 3's adds need no result, so they are summed in memory and written once per interval. */
  private readonly totals: PendingCounters;
  /** Latency index entries already written by this process (the write is idempotent; this only saves repeats). */
  private readonly indexed = new Set<string>();

  constructor(counters: Counters, records: Records, options: { flushIntervalMs: number } = { flushIntervalMs: 0 }) {
    this.counters = counters;
    this.records = records;
    this.totals = new PendingCounters(counters, options.flushIntervalMs);
  }

  /** Writes the pending aggregate deltas (readers call it first; the local server on shutdown). */
  flush(): Promise<void> {
    return this.totals.flush();
  }

  async record(log: RequestLog): Promise<void> {
    if (log.source === "gateway" && !DATA_PLANE_ROUTES.has(log.route)) return;
    const time = Date.parse(log.createdAt);
    if (!Number.isFinite(time)) return;
    const org = log.organisationId;
    const hour = hourBucket(time);
    const day = dayBucket(time);
    const hourExpiry = { expiresAt: Math.floor(time / 1000) + HOURLY_RETENTION_DAYS * 86_400 };
    const dayExpiry = { expiresAt: Math.floor(time / 1000) + DAILY_RETENTION_DAYS * 86_400 };
    const workspace = log.workspaceId ?? NO_VALUE;
    let cell: Cell = {
      workspace,
      provider: log.provider ?? NO_VALUE,
      model: log.requestedModel ?? log.answeredModel ?? NO_VALUE,
    };
    const user = log.userId ?? log.metadata?._user;
    const pairs = Object.entries(log.metadata ?? {})
      .filter(([key]) => key !== "_user")
      .slice(0, METADATA_PAIRS_PER_REQUEST);
    const add = (key: string, amount: number, expiry: { expiresAt: number }) => this.counters.add(key, amount, expiry);

    // Round 1: the daily counts that also tell whether a value is new today.
    const [cellDay, userDay, userHour, ...pairDays] = await Promise.all([
      add(cellKey(org, day, cell, "n"), 1, dayExpiry),
      user ? add(groupKey(org, day, workspace, "u", user, "n"), 1, dayExpiry) : undefined,
      user ? add(groupKey(org, hour, workspace, "u", user, "n"), 1, hourExpiry) : undefined,
      ...pairs.map(([key, value]) => add(groupKey(org, day, workspace, `m:${key}`, value, "n"), 1, dayExpiry)),
    ]);

    // Round 2 (rare): admit new values under the caps and index them.
    const dayIndex = day.slice(1);
    const index = (...parts: string[]) =>
      this.records.put({ pk: indexPartition(org, dayIndex), sk: indexSort(...parts), ttl: dayExpiry.expiresAt });
    const admit = async (
      dimension: string,
      cap: number,
      entry: string[],
      key: string,
      overflow: string[],
      overflowKey: string,
    ): Promise<boolean> => {
      const admitted = await this.counters.add(distinctKey(org, day, workspace, dimension), 1, {
        ceiling: cap,
        ...dayExpiry,
      });
      if (admitted.admitted) {
        await Promise.all([index(...entry), index("w", workspace)]);
        return true;
      }
      await add(key, -1, dayExpiry);
      const other = await add(overflowKey, 1, dayExpiry);
      if (other.value === 1) await index(...overflow);
      return false;
    };
    const newWork: Promise<unknown>[] = [];
    if (cellDay.value === 1) {
      const otherCell = { workspace, provider: OTHER, model: OTHER };
      newWork.push(
        admit(
          "cells",
          CELL_CAP,
          ["c", workspace, cell.provider, cell.model],
          cellKey(org, day, cell, "n"),
          ["c", workspace, OTHER, OTHER],
          cellKey(org, day, otherCell, "n"),
        ).then((admitted) => {
          if (!admitted) cell = otherCell;
        }),
      );
    }
    let userName = user;
    if (user && userDay?.value === 1) {
      newWork.push(
        admit(
          "users",
          USER_CAP,
          ["u", workspace, user],
          groupKey(org, day, workspace, "u", user, "n"),
          ["u", workspace, OTHER],
          groupKey(org, day, workspace, "u", OTHER, "n"),
        ).then(async (admitted) => {
          if (admitted) await add(workspaceKey(org, day, workspace, "u"), 1, dayExpiry);
          else userName = OTHER;
        }),
      );
    }
    const pairNames = pairs.map(([key, value]) => [key, value]);
    pairs.forEach(([key, value], position) => {
      if (pairDays[position]?.value !== 1) return;
      const dimension = `m:${key}`;
      newWork.push(
        admit(
          "metadata",
          METADATA_CAP,
          ["m", workspace, key, value],
          groupKey(org, day, workspace, dimension, value, "n"),
          ["m", workspace, key, OTHER],
          groupKey(org, day, workspace, dimension, OTHER, "n"),
        ).then((admitted) => {
          if (!admitted) pairNames[position] = [key, OTHER];
        }),
      );
    });
    await Promise.all(newWork);

    // Round 3: everything else.
    const costMicros = log.cost ? Math.round(log.cost * 1e6) : 0;
    const failed = log.status >= 400 || log.error !== undefined;
    const cacheHit = log.cacheStatus !== undefined && /^hit/i.test(log.cacheStatus);
    const latency = `l${latencyBucket(log.latencyMs)}`;
    const total = (key: string, amount: number, expiry: { expiresAt: number }) =>
      this.totals.add(key, amount, expiry.expiresAt);
    total(cellKey(org, hour, cell, "n"), 1, hourExpiry);
    const both = (field: string, amount: number) => {
      total(cellKey(org, hour, cell, field), amount, hourExpiry);
      total(cellKey(org, day, cell, field), amount, dayExpiry);
    };
    if (log.usage) {
      if (log.usage.promptTokens) both("p", log.usage.promptTokens);
      if (log.usage.completionTokens) both("o", log.usage.completionTokens);
    }
    if (costMicros) both("c", costMicros);
    if (failed) both("e", 1);
    if (cacheHit) both("h", 1);
    both(latency, 1);
    const adds: Array<Promise<unknown>> = [];
    const latencyEntry = ["l", workspace, cell.provider, cell.model, latency.slice(1)];
    const latencyIndexKey = `${org}|${dayIndex}|${latencyEntry.join("|")}`;
    if (!this.indexed.has(latencyIndexKey)) {
      if (this.indexed.size > 50_000) this.indexed.clear();
      this.indexed.add(latencyIndexKey);
      adds.push(index(...latencyEntry));
    }
    if (userName) {
      if (costMicros) total(groupKey(org, day, workspace, "u", userName, "c"), costMicros, dayExpiry);
      if (userHour?.value === 1) adds.push(add(workspaceKey(org, hour, workspace, "u"), 1, hourExpiry));
    }
    if (costMicros) {
      for (const [key, value] of pairNames)
        total(groupKey(org, day, workspace, `m:${key}`, value!, "c"), costMicros, dayExpiry);
    }
    if (this.totals.immediate) adds.push(this.totals.flush());
    await Promise.all(adds);
  }

  /**
   * Counts feedback into the workspace cell of the hour and day it was created in: count, sum of
   * value x weight and sum of weights. An update passes the difference (count 0).
   */
  async recordFeedback(input: {
    organisationId: string;
    workspaceId?: string;
    createdAt: number;
    count: number;
    weightedValue: number;
    weight: number;
  }): Promise<void> {
    const org = input.organisationId;
    const workspace = input.workspaceId ?? NO_VALUE;
    const hour = hourBucket(input.createdAt);
    const day = dayBucket(input.createdAt);
    const hourExpiry = { expiresAt: Math.floor(input.createdAt / 1000) + HOURLY_RETENTION_DAYS * 86_400 };
    const dayExpiry = { expiresAt: Math.floor(input.createdAt / 1000) + DAILY_RETENTION_DAYS * 86_400 };
    const fields: Array<[string, number]> = [
      ["fn", input.count],
      ["fv", Math.round(input.weightedValue * 1e6)],
      ["fw", Math.round(input.weight * 1e6)],
    ];
    const adds: Promise<unknown>[] = [];
    for (const [field, amount] of fields) {
      if (!amount) continue;
      adds.push(this.counters.add(workspaceKey(org, hour, workspace, field), amount, hourExpiry));
      adds.push(this.counters.add(workspaceKey(org, day, workspace, field), amount, dayExpiry));
    }
    if (input.count > 0) {
      adds.push(
        this.records.put({
          pk: indexPartition(org, day.slice(1)),
          sk: indexSort("w", workspace),
          ttl: dayExpiry.expiresAt,
        }),
      );
    }
    await Promise.all(adds);
  }
}
