import type { RequestLog } from "../logs/log-record.ts";
import type { Counters, Records } from "../../store/ports.ts";
import { PendingCounters } from "./pending-counters.ts";
import {
  DAILY_RETENTION_DAYS,
  HOURLY_RETENTION_DAYS,
  NO_VALUE,
  dayBucket,
  hourBucket,
  indexPartition,
  indexSort,
  workspaceKey,
} from "./keys.ts";

/**
 * Keeps the analytics aggregates (core/observe/analytics/counting.ts does the counting) up to date.
 *
 * Request logs: locally each written log (RequestLogger observer, after the response) waits in memory, only
 * the fields counted, and the logs of each 100 ms are counted together as one batch (the same code the AWS
 * stream worker runs): the daily counts that tell whether a value is new today are added once per distinct
 * key, everything else is summed in memory (PendingCounters) and written once per counter each second.
 * Readers flush first, so an analytics read includes every log written before it. On AWS a Lambda container
 * may freeze at any time, so nothing can wait in memory: logs are counted from the table's DynamoDB stream
 * instead, a batch at a time, by the analytics stream worker (core/platform/aws/analytics-stream-handler.ts),
 * and `countLogsFromStream()` turns `record` off, so the request path writes no analytics at all. (With an interval of 0 and no stream, `record` writes everything
 * at once: about 10 adds for a priced chat request.)
 *
 * Feedback is rare and counted where it is given, on both platforms (`recordFeedback`).
 */
/** Waiting logs are counted this often: small batches keep each count's pause of the event loop short. */
const COUNT_EVERY_MS = 100;

type Counting = Pick<typeof import("./counting.ts"), "countLogs" | "CountingError"> &
  Pick<typeof import("./cell-groups.ts"), "countedFields">;

/**
 * The counting code, loaded when the first log is counted here: on AWS logs are counted by the stream worker, so
 * it (and the route table it reads) stays out of every function's cold start.
 */
let counting: Counting | undefined;
let loadingCounting: Promise<Counting> | undefined;
function loadCounting(): Promise<Counting> {
  loadingCounting ??= Promise.all([import("./counting.ts"), import("./cell-groups.ts")]).then(([code, groups]) => {
    counting = { countLogs: code.countLogs, CountingError: code.CountingError, countedFields: groups.countedFields };
    return counting;
  });
  return loadingCounting;
}

export class AnalyticsRecorder {
  private readonly counters: Counters;
  private readonly records: Records;
  /** Round 3's adds need no result, so they are summed in memory and written once per interval. */
  private readonly totals: PendingCounters;
  /** Latency index entries already written by this process (the write is idempotent; this only saves repeats). */
  private readonly indexed = new Set<string>();
  private fromStream = false;
  private readonly intervalMs: number;
  /** Logs written since the last count (local platform), and the timer that counts them. */
  private waiting: RequestLog[] = [];
  private countTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(counters: Counters, records: Records, options: { flushIntervalMs: number } = { flushIntervalMs: 0 }) {
    this.counters = counters;
    this.records = records;
    this.totals = new PendingCounters(counters, options.flushIntervalMs);
    this.intervalMs = options.flushIntervalMs;
  }

  /**
   * Logs are counted by a consumer of the log store's change stream (AWS), so `record` does nothing: the
   * request path neither reads nor writes analytics. Feedback is still counted here.
   */
  countLogsFromStream(): void {
    this.fromStream = true;
  }

  get countsLogsFromStream(): boolean {
    return this.fromStream;
  }

  /** Counts the waiting logs and writes the pending deltas (readers call it first; the server on shutdown). */
  async flush(): Promise<void> {
    await this.countWaiting();
    await this.totals.flush();
  }

  /** The count in progress (a timer's, or a reader's): counts run one after another, and readers wait for them. */
  private counting: Promise<void> = Promise.resolve();

  /** Counts a log: at once with no interval (the promise settles when written), else with the next batch. */
  record(log: RequestLog): Promise<void> | undefined {
    if (this.fromStream) return undefined;
    if (this.totals.immediate) return this.countOrRetry([log]);
    // One process, many requests: logs wait (only the fields counted) and are counted together once per
    // interval, like a batch of the AWS stream, so the per-request cost is a push. (The few logs that come before
    // the counting code is loaded wait whole.)
    if (counting) this.waiting.push(counting.countedFields(log));
    else {
      this.waiting.push(log);
      void loadCounting().catch(() => {});
    }
    this.countTimer ??= setTimeout(
      () => {
        this.countTimer = undefined;
        this.countWaiting().catch((error) => console.error("analytics counting failed", error));
      },
      Math.min(this.intervalMs, COUNT_EVERY_MS),
    );
    this.countTimer.unref?.();
    return undefined;
  }

  private countWaiting(): Promise<void> {
    clearTimeout(this.countTimer);
    this.countTimer = undefined;
    const logs = this.waiting;
    this.waiting = [];
    const run = this.counting.then(() => (logs.length > 0 ? this.countOrRetry(logs) : undefined));
    // The chain goes on after a failure (it is reported to this caller).
    this.counting = run.catch(() => {});
    return run;
  }

  /**
   * A batch whose daily counts failed half-way has its applied adds undone and is counted once more, so a
   * passing fault costs no logs and counts none twice; a second failure is undone too, and reported.
   */
  private async countOrRetry(logs: RequestLog[]): Promise<void> {
    const { CountingError } = await loadCounting();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.count(logs);
      } catch (error) {
        if (!(error instanceof CountingError)) throw error;
        await Promise.all(
          error.applied.map(([key, amount, expiresAt]) => this.counters.add(key, -amount, { expiresAt })),
        );
        if (attempt === 2) throw error.cause;
      }
    }
  }

  private async count(logs: RequestLog[]): Promise<void> {
    const { countLogs } = await loadCounting();
    const plan = await countLogs({ counters: this.counters, records: this.records }, logs, this.indexed);
    for (const [key, { amount, expiresAt }] of plan.adds) this.totals.add(key, amount, expiresAt);
    const writes: Array<Promise<unknown>> = [...plan.puts.values()].map((item) => this.records.put(item));
    if (this.totals.immediate) writes.push(this.totals.flush());
    await Promise.all(writes);
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
