import { CircuitBreaker } from "../../logs/circuit-breaker.ts";
import { indexEntries, searchIndexItems } from "../../logs/index-items.ts";
import { layoutLog, resolveLateJson } from "../../logs/log-layout.ts";
import type { RequestLog } from "../../logs/log-record.ts";
import { type LogSearch, type LogSearchPage, logFacts } from "../../logs/log-search.ts";
import type { LogEntry, LogSink } from "../../logs/log-sink.ts";
import { type Blobs, type RecordItem, StoreUnavailableError } from "../../store/ports.ts";
import { isExpired, nowSeconds } from "../../store/record-rules.ts";
import type { Database } from "./database.ts";
import type { LogSpill, SpilledLog } from "./log-spill.ts";
import { MysqlRecords, type RecordRow, recordRow, upsertSql } from "./mysql-records.ts";

/** Logs written together in one INSERT; a batch also closes after BATCH_DELAY_MS. */
const BATCH_ROWS = 200;
const BATCH_DELAY_MS = 10;
/** Logs per INSERT while replaying the disk buffer. */
const REPLAY_ROWS = 200;
/**
 * Rows per INSERT statement: a log is its record and 10 to 50 search index rows, and a statement takes at most
 * 65,535 placeholders (6 a row).
 */
const MAX_ROWS_PER_INSERT = 2000;
/** Batch inserts running at once. */
const MAX_IN_FLIGHT = 2;

export const LOGS_TABLE = "request_logs";

export interface MysqlLogSinkOptions {
  /** The log store's connection pool (its statements bounded by LOG_STORE_CONNECTION_TIMEOUT_MS). */
  database: Database;
  blobs: Blobs;
  /** Where logs wait while the log store is down. */
  spill: LogSpill;
  /** LOG_STORE_CONNECTION_FAILURE_THRESHOLD / _BACKOFF_MS / _TIMEOUT_MS. */
  threshold: number;
  backoffMs: number;
  timeoutMs: number;
  /** Creates the log table when the log store was not reachable at start (its own server); run before inserts. */
  prepare?: () => Promise<unknown>;
}

interface Pending {
  log: SpilledLog;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The log sink of the MySQL platform. Logs are inserted in batches (one multi-row INSERT per BATCH_ROWS or
 * BATCH_DELAY_MS) into their own table, on their own pool, possibly on another server (LOG_STORE_DATABASE_URL).
 * A circuit breaker guards the log store: after `threshold` failed batches in a row it opens for `backoffMs`,
 * during which batches go straight to the local-disk buffer (log-spill.ts); then a batch (or the replay) tries
 * the store again, and once one succeeds the buffer is replayed into it. A write resolves once its log is in the
 * store or in the buffer, and at the latest after half of `timeoutMs` (a hung store), so requests and the
 * RequestLogger's own breaker never wait on it; it rejects only when the buffer is full (the log is dropped,
 * counted in `spill.dropped` and reported). Replay writes rows as they were (upserts), so a log stored twice
 * (buffered after a slow insert that then succeeded) is stored once.
 *
 * Beside each log go its search index rows (core/logs/index-items.ts: one per term, in the same table and the
 * same multi-row upsert), which `search` walks: a bounded number of index rows per call, the matching logs then
 * read by key in one statement (core/logs/log-search.ts).
 */
export class MysqlLogSink implements LogSink {
  readonly records: MysqlRecords;
  readonly breaker: CircuitBreaker;
  readonly #database: Database;
  readonly #blobs: Blobs;
  readonly #spill: LogSpill;
  readonly #timeoutMs: number;
  readonly #halfTimeoutMs: number;
  readonly #backoffMs: number;
  readonly #threshold: number;
  #pending: Pending[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #spilling = new Set<Promise<void>>();
  #deadline: ReturnType<typeof setTimeout> | undefined;
  #replaying: Promise<void> | undefined;
  #probe: ReturnType<typeof setTimeout> | undefined;
  #wasOpen = false;
  #failuresInRow = 0;
  #prepare: (() => Promise<unknown>) | undefined;
  #closed = false;
  /** Logs replayed from the buffer since start. */
  replayed = 0;

  constructor(options: MysqlLogSinkOptions) {
    this.#database = options.database;
    this.records = new MysqlRecords(options.database, LOGS_TABLE);
    this.#blobs = options.blobs;
    this.#spill = options.spill;
    this.#timeoutMs = options.timeoutMs;
    this.#halfTimeoutMs = Math.max(1, Math.floor(options.timeoutMs / 2));
    this.#backoffMs = options.backoffMs;
    this.#threshold = options.threshold;
    this.#prepare = options.prepare;
    this.breaker = new CircuitBreaker(options);
    // Logs left in the buffer by an earlier run go in as soon as the store answers.
    if (this.#spill.bytes > 0) this.#scheduleProbe(0);
  }

  write(entry: LogEntry): Promise<void> {
    let log: SpilledLog;
    try {
      const { item, blob } = layoutLog(entry);
      // Deferred bodies are produced here, on the event loop, after the response.
      item.requestBody = resolveLateJson(item.requestBody);
      item.responseBody = resolveLateJson(item.responseBody);
      log = { row: recordRow(item), index: indexEntries(logFacts(entry.log), item.ttl).map(recordRow), blob };
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ log, resolve, reject });
      // Waiting behind inserts that do not finish (a hung store): buffered after half the call timeout.
      if (this.#pending.length === 1) this.#deadline = setTimeout(() => this.#spillPending(), this.#halfTimeoutMs);
      if (this.#pending.length >= BATCH_ROWS) this.#flush();
      else this.#timer ??= setTimeout(() => this.#flush(), BATCH_DELAY_MS);
    });
  }

  search(search: LogSearch): Promise<LogSearchPage> {
    return searchIndexItems(this.records, search, (keys) => this.#loadLogs(keys));
  }

  /** Log records by key, in the keys' order, in one statement (undefined: absent or expired). */
  async #loadLogs(keys: Array<{ pk: string; sk: string }>): Promise<Array<RecordItem | undefined>> {
    if (keys.length === 0) return [];
    const rows = await this.#database.run<Array<{ pk: Buffer | string; data: string; ttl: number | null }>>(
      "logs.search",
      `SELECT pk, data, ttl FROM ${LOGS_TABLE} WHERE sk = 'LOG' AND pk IN (${keys.map(() => "?").join(", ")})`,
      keys.map((key) => key.pk),
    );
    const now = nowSeconds();
    const found = new Map<string, RecordItem>();
    for (const row of rows) {
      if (!isExpired(row.ttl, now)) found.set(String(row.pk), JSON.parse(row.data) as RecordItem);
    }
    return keys.map((key) => found.get(key.pk));
  }

  /** Bytes waiting in the local buffer, and logs dropped because it was full. */
  get buffered(): number {
    return this.#spill.bytes;
  }

  get dropped(): number {
    return this.#spill.dropped;
  }

  /**
   * Starts an insert of what is pending, unless MAX_IN_FLIGHT are running: then the batch grows until one ends
   * (which flushes again). Few inserts at once also means few failures counted against a store that hangs after
   * the breaker opened, so it is not opened again by calls made before it opened.
   */
  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0 || this.#inFlight.size >= MAX_IN_FLIGHT) return;
    const batch = this.#takePending(BATCH_ROWS);
    const work = this.#store(batch).finally(() => {
      this.#inFlight.delete(work);
      if (this.#pending.length > 0) this.#flush();
    });
    this.#inFlight.add(work);
  }

  /** Up to `max` pending logs, oldest first (the deadline stays armed for those left). */
  #takePending(max = Number.POSITIVE_INFINITY): Pending[] {
    const batch = this.#pending.splice(0, max);
    if (this.#pending.length === 0) {
      clearTimeout(this.#deadline);
      this.#deadline = undefined;
    }
    return batch;
  }

  /** The pending logs straight into the buffer: the inserts ahead of them have not finished in time. */
  #spillPending(): void {
    const batch = this.#takePending();
    if (batch.length === 0) return;
    const work = this.#buffer(batch).finally(() => this.#spilling.delete(work));
    this.#spilling.add(work);
  }

  /** One batch: into the store, or (store failing, circuit open, or too slow) into the buffer. */
  async #store(batch: Pending[]): Promise<void> {
    const logs = batch.map((pending) => pending.log);
    let settled = false;
    const toBuffer = async () => {
      if (settled) return;
      settled = true;
      await this.#buffer(batch);
    };
    const slow = setTimeout(() => void toBuffer(), this.#halfTimeoutMs);
    const stored = await this.#attempt(logs);
    clearTimeout(slow);
    if (stored && !settled) {
      settled = true;
      for (const pending of batch) pending.resolve();
      if (this.#spill.bytes > 0) this.#startReplay();
      return;
    }
    await toBuffer();
  }

  async #buffer(batch: Pending[]): Promise<void> {
    let kept = 0;
    try {
      kept = await this.#spill.append(batch.map((pending) => pending.log));
    } catch (error) {
      console.error("log buffer: writing to disk failed", error);
    }
    for (const [index, pending] of batch.entries()) {
      if (index < kept) pending.resolve();
      else pending.reject(new StoreUnavailableError("the log store is down and the log buffer is full"));
    }
    // Replayed once the store answers: on the next stored batch, or by this probe if no log comes meanwhile.
    if (kept > 0) this.#scheduleProbe(this.#backoffMs + 1);
    if (kept < batch.length) {
      console.error(
        `log buffer full (${this.#spill.dir}): dropped ${batch.length - kept} logs, ${this.#spill.dropped} since start`,
      );
    }
  }

  /**
   * One insert through the breaker (skipped while it is open). Each failure while it is closed is reported, with
   * how many in a row there have been, before the breaker counts it: the log shows it opening at the threshold.
   * The insert gets a deadline just inside the breaker's own, so a hung store fails here first too.
   */
  async #attempt(logs: SpilledLog[]): Promise<boolean> {
    const stored = await this.breaker.run(async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await Promise.race([
          this.#insert(logs),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`no answer in ${this.#timeoutMs} ms`)),
              Math.max(1, this.#timeoutMs - 50),
            );
          }),
        ]);
      } catch (error) {
        this.#failuresInRow++;
        console.error(
          `log store write failed (${(error as Error).message}): ${this.#failuresInRow} in a row of ${this.#threshold}`,
        );
        throw error;
      } finally {
        clearTimeout(timer);
      }
    });
    if (stored) this.#failuresInRow = 0;
    this.#noteBreaker();
    return stored;
  }

  /** Bodies' blobs first (the rows name them), then one multi-row upsert. */
  async #insert(logs: SpilledLog[]): Promise<void> {
    if (this.#prepare) {
      await this.#prepare();
      this.#prepare = undefined;
    }
    await Promise.all(
      logs.map(async (log) => {
        if (!log.blob) return;
        await this.#blobs.put(log.blob.key, log.blob.json, { contentType: "application/json" });
        // Stored: a replay of this log does not write its blob again.
        log.blob = undefined;
      }),
    );
    const rows = logs.flatMap((log) => [log.row, ...(log.index ?? indexRowsOf(log.row))]);
    for (let start = 0; start < rows.length; start += MAX_ROWS_PER_INSERT) {
      const slice = rows.slice(start, start + MAX_ROWS_PER_INSERT);
      await this.#database.run("logs.insert", upsertSql(LOGS_TABLE, slice.length), slice.flat());
    }
  }

  /** Says when the circuit opens, and arranges a probe for when its backoff ends. */
  #noteBreaker(): void {
    const open = this.breaker.open;
    if (open && !this.#wasOpen) {
      this.#failuresInRow = 0;
      console.error(`log store unreachable: buffering request logs in ${this.#spill.dir} until it answers again`);
      this.#scheduleProbe(this.#backoffMs + 1);
    }
    this.#wasOpen = open;
  }

  /** After the backoff, the replay is the probe: it tries the store with the oldest buffered logs. */
  #scheduleProbe(delayMs: number): void {
    if (this.#closed || this.#probe) return;
    this.#probe = setTimeout(() => {
      this.#probe = undefined;
      if (this.#spill.bytes > 0) this.#startReplay();
    }, delayMs);
    this.#probe.unref();
  }

  #startReplay(): void {
    this.#replaying ??= this.#replay().finally(() => {
      this.#replaying = undefined;
    });
  }

  /** Replays every claimed segment oldest first; stops (keeping what is left) when the store fails again. */
  async #replay(): Promise<void> {
    const segments = await this.#spill.claimSegments();
    let total = 0;
    for (const segment of segments) {
      let chunk: SpilledLog[] = [];
      let failed = false;
      const send = async () => {
        const ok = await this.#attempt(chunk);
        if (!ok) failed = true;
        else total += chunk.length;
        chunk = [];
      };
      for await (const log of this.#spill.read(segment)) {
        chunk.push(log);
        if (chunk.length >= REPLAY_ROWS) await send();
        if (failed) break;
      }
      if (!failed && chunk.length > 0) await send();
      if (failed) {
        this.replayed += total;
        // Still down: try again after another backoff, even if no new log arrives meanwhile.
        this.#scheduleProbe(this.#backoffMs + 1);
        return;
      }
      await this.#spill.remove(segment);
    }
    this.replayed += total;
    if (total > 0) {
      console.error(
        `log store answering again: replayed ${total} buffered request logs (${this.replayed} since start)`,
      );
    }
  }

  /** Writes what is pending, waits for it, and replays the buffer if the store answers; the rest stays on disk. */
  async close(): Promise<void> {
    this.#flush();
    while (this.#inFlight.size + this.#spilling.size > 0 || this.#pending.length > 0) {
      await Promise.allSettled([...this.#inFlight, ...this.#spilling]);
      this.#flush();
    }
    await this.#replaying;
    if (!this.breaker.open && this.#spill.bytes > 0) await this.#replay().catch(() => {});
    this.#closed = true;
    clearTimeout(this.#probe);
  }
}

/** The search index rows of a log buffered by a version that wrote none (made from its record's row). */
function indexRowsOf(row: RecordRow): RecordRow[] {
  const { ttl, ...log } = JSON.parse(row[5] as string) as RequestLog & { ttl?: number };
  return indexEntries(logFacts(log), ttl).map(recordRow);
}
