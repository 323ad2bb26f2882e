import type { RequestLog } from "../logs/log-record.ts";
import type { Counters, RecordItem, Records } from "../../store/ports.ts";
import { type CountingPlan, CountingError, countLogs, emptyPlan, planAdd, planPut, runLimited } from "./counting.ts";

/** One log of a batch and its position in the source (a stream sequence number). */
export interface LogBatchEntry {
  sequence: string;
  log: RequestLog;
}

export interface LogBatchResult {
  /**
   * False: the batch must be delivered again from its first record. Whatever this attempt could not write
   * is kept in the batch's retry journal, so the next attempt completes it without counting anything twice.
   */
  done: boolean;
  /** Logs counted by this attempt, and logs skipped because an earlier attempt of the batch counted them. */
  counted: number;
  skipped: number;
}

export interface LogBatchOptions {
  /** Epoch ms after which no write is retried (the Lambda's deadline, less a margin). */
  deadline?: number;
  /** Pauses between rounds of retrying the writes that failed. */
  retryDelaysMs?: number[];
}

const JOURNAL_SK = "RETRY";
/** Longer than a DynamoDB stream keeps records (24 h): the journal outlives every retry of its batch. */
const JOURNAL_TTL_SECONDS = 2 * 86_400;
/** DynamoDB items are at most 400 KB. */
const JOURNAL_MAX_BYTES = 350_000;
const DEFAULT_RETRY_DELAYS_MS = [100, 400, 1600];

export const journalKey = (batchId: string) => ({ pk: `ANRETRY#${batchId}`, sk: JOURNAL_SK });

/** What an earlier, failed attempt of a batch left: how far it counted, and the writes it could not make. */
interface Journal {
  /** The sequence number of the last log the attempt counted (logs up to it are skipped). */
  through?: string;
  adds: Array<[string, number, number]>;
  puts: RecordItem[];
}

/**
 * Counts batches of request logs into the analytics aggregates (core/observe/analytics/counting.ts), summing the
 * deltas of the whole batch so each distinct counter is written once per batch: the AWS stream worker's
 * engine (core/platform/aws/analytics-stream-handler.ts), platform-neutral (any Counters and Records).
 *
 * Retries and duplicates. Counter adds are not idempotent, so a batch delivered again must not be counted
 * again. An attempt either completes, or ends in one of two known states that the next attempt of the same
 * batch (delivered again from the same first record, so with the same batch id) can finish exactly:
 * - a write of rounds 1-2 (the adds whose results decide what is new today) fails: the adds that were applied
 *   are undone (negative adds), so nothing of the batch is counted and the next attempt starts afresh;
 * - a write of round 3 (plain adds and idempotent index puts, the bulk) still fails after in-process retries:
 *   the logs are counted as far as rounds 1-2 go, and the failed writes are saved in a retry journal
 *   (`ANRETRY#<batch id>`, one record) with the sequence number of the last log counted. The next attempt
 *   reads the journal (1 read per batch), makes the saved writes first, skips the logs up to that sequence
 *   number, counts the rest, and deletes the journal once everything is written.
 * Undo writes that fail are journaled the same way (and made before the retry counts again, so a value new
 * today is still seen as new).
 * Duplicates remain possible only where they cannot be avoided: an attempt that crashes or times out mid-way
 * (the Lambda is killed before it can undo or journal), a write whose outcome is unknown (a timeout after
 * DynamoDB applied it), or when the undo or the journal write itself fails (the store is down; logged).
 */
export class AnalyticsBatchCounter {
  private readonly counters: Counters;
  private readonly records: Records;
  /** Latency index entries this container already put (see countLogs). */
  private readonly indexed = new Set<string>();

  constructor(stores: { counters: Counters; records: Records }) {
    this.counters = stores.counters;
    this.records = stores.records;
  }

  /** `batchId` names the delivery (the first record of the batch): it is the same on every retry. */
  async count(batchId: string, entries: LogBatchEntry[], options: LogBatchOptions = {}): Promise<LogBatchResult> {
    const deadline = options.deadline ?? Number.POSITIVE_INFINITY;
    const delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    let journal: Journal | undefined;
    try {
      const key = journalKey(batchId);
      journal = toJournal(await this.records.get(key.pk, key.sk));
    } catch (error) {
      console.error(`analytics batch ${batchId}: reading its retry journal failed; the batch will be retried`, error);
      return { done: false, counted: 0, skipped: 0 };
    }
    const through = journal?.through;
    const uncounted =
      through === undefined ? entries : entries.filter((entry) => compareSequence(entry.sequence, through) > 0);
    const skipped = entries.length - uncounted.length;
    const notDone = { done: false, counted: 0, skipped };

    // First the writes an earlier attempt could not make (its undo must land before round 1 runs again).
    if (journal && (journal.adds.length > 0 || journal.puts.length > 0)) {
      const left = await this.write(fromJournal(journal), deadline, delays);
      if (!isEmpty(left)) {
        await this.saveJournal(batchId, { through, plan: left });
        return notDone;
      }
    }

    let plan: CountingPlan;
    try {
      plan = await countLogs(
        { counters: this.counters, records: this.records },
        uncounted.map((entry) => entry.log),
        this.indexed,
      );
    } catch (error) {
      if (!(error instanceof CountingError)) throw error;
      console.error(`analytics batch ${batchId}: counting failed, undoing its adds; the batch will be retried`, error);
      const undo = emptyPlan();
      for (const [counter, amount, expiresAt] of error.applied) planAdd(undo, counter, -amount, expiresAt);
      const left = await this.write(undo, deadline, delays);
      // The journal keeps how far earlier attempts counted and what is still to write (its old writes are done).
      const replayed = journal !== undefined && journal.adds.length + journal.puts.length > 0;
      if (!isEmpty(left) || (replayed && through !== undefined))
        await this.saveJournal(batchId, { through, plan: left });
      else if (replayed) await this.deleteJournal(batchId);
      return notDone;
    }

    const left = await this.write(plan, deadline, delays);
    if (isEmpty(left)) {
      if (journal) await this.deleteJournal(batchId);
      return { done: true, counted: uncounted.length, skipped };
    }
    console.error(
      `analytics batch ${batchId}: ${left.adds.size + left.puts.size} writes failed; kept for the batch's retry`,
    );
    await this.saveJournal(batchId, { through: uncounted.at(-1)?.sequence ?? through, plan: left });
    return { done: false, counted: uncounted.length, skipped };
  }

  /** Writes a plan, retrying what fails until the delays run out or the deadline comes; returns what is left. */
  private async write(plan: CountingPlan, deadline: number, delays: number[]): Promise<CountingPlan> {
    let left = plan;
    for (let attempt = 0; ; attempt++) {
      left = await this.writeOnce(left, deadline);
      if (isEmpty(left)) return left;
      const delay = delays[attempt];
      if (delay === undefined || Date.now() + delay >= deadline) return left;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /**
   * One pass over a plan; what fails is returned. Writes not yet started when the deadline comes are returned
   * too, unwritten: the journal then holds them for the retry instead of the invocation timing out half-way.
   */
  private async writeOnce(plan: CountingPlan, deadline: number): Promise<CountingPlan> {
    const failed = emptyPlan();
    const adds = [...plan.adds].filter(([, { amount }]) => amount !== 0);
    const puts = [...plan.puts.values()];
    const beforeDeadline =
      <T>(write: () => Promise<T>) =>
      (): Promise<T> =>
        Date.now() < deadline ? write() : Promise.reject(new Error("the invocation's deadline came"));
    const results = await runLimited([
      ...adds.map(([counter, { amount, expiresAt }]) =>
        beforeDeadline(() => this.counters.add(counter, amount, { expiresAt })),
      ),
      ...puts.map((item) => beforeDeadline(() => this.records.put(item))),
    ]);
    results.forEach((result, position) => {
      if (result.status === "fulfilled") return;
      if (position < adds.length) {
        const [counter, { amount, expiresAt }] = adds[position]!;
        planAdd(failed, counter, amount, expiresAt);
      } else planPut(failed, puts[position - adds.length]!);
    });
    return failed;
  }

  private async deleteJournal(batchId: string): Promise<void> {
    const key = journalKey(batchId);
    await this.records.delete(key.pk, key.sk).catch((error) => {
      console.error(`analytics batch ${batchId}: deleting its retry journal failed (it expires)`, error);
    });
  }

  /** Saves (replaces) the batch's retry journal. A failure is logged: the retry may then count twice. */
  private async saveJournal(batchId: string, state: { through?: string; plan: CountingPlan }): Promise<void> {
    const item: RecordItem = {
      ...journalKey(batchId),
      ttl: Math.floor(Date.now() / 1000) + JOURNAL_TTL_SECONDS,
      adds: [...state.plan.adds].map(([counter, { amount, expiresAt }]) => [counter, amount, expiresAt]),
      puts: [...state.plan.puts.values()],
    };
    if (state.through !== undefined) item.through = state.through;
    try {
      if (JSON.stringify(item).length > JOURNAL_MAX_BYTES) throw new RangeError("the retry journal is too large");
      await this.records.put(item);
    } catch (error) {
      console.error(
        `analytics batch ${batchId}: saving its retry journal failed; its retry may count part of it twice`,
        error,
      );
    }
  }
}

function toJournal(item: RecordItem | undefined): Journal | undefined {
  if (!item) return undefined;
  return {
    through: typeof item.through === "string" ? item.through : undefined,
    adds: Array.isArray(item.adds) ? (item.adds as Array<[string, number, number]>) : [],
    puts: Array.isArray(item.puts) ? (item.puts as RecordItem[]) : [],
  };
}

const isEmpty = (plan: CountingPlan) => plan.puts.size === 0 && [...plan.adds.values()].every((add) => !add.amount);

function fromJournal(journal: Journal): CountingPlan {
  const plan = emptyPlan();
  for (const [counter, amount, expiresAt] of journal.adds) planAdd(plan, counter, amount, expiresAt);
  for (const item of journal.puts) planPut(plan, item);
  return plan;
}

/**
 * Orders stream sequence numbers: decimal strings of varying length (DynamoDB's), so a shorter one is
 * smaller; equal lengths compare as text.
 */
export function compareSequence(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
