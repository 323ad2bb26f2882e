import { type ResourceOwner, ownerKey } from "../../auth/resource-owner.ts";
import { ConditionFailedError, type RecordItem, type Records } from "../../store/ports.ts";
import type { BatchResultLine, BatchStatus, StoredBatch } from "./types.ts";

/**
 * Batch records, on single-item conditional writes only (DynamoDB without transactions):
 * - the batch: pk `BATCHES#<org>#<workspace>`, sk `<batch id>` (ids sort by creation time, so a reverse query
 *   lists newest first). Every change is conditional on the version read (`v`), so two writers never lose each
 *   other's changes. While not terminal it is also in the global active index (gsi1 `BATCHES#ACTIVE`), which the
 *   scheduled sweep reads; a terminal batch leaves it.
 * - one result per settled line: pk `BATCHRES#<batch id>`, sk the zero-padded line number, written once
 *   (`exists: false`): a redelivered line never adds a second result. `counted` marks the results already added
 *   to the batch's counters (core/features/batches/progress.ts), so a line redelivered between its write and its count is
 *   counted once. A result line larger than MAX_INLINE_RESULT goes to Blobs (`blob`).
 * - one claim per line being run: pk `BATCHCLAIM#<batch id>`, sk the line number, `owner` the run, expiring after
 *   a short lease the run renews while it lasts. A queue may hand a line to a second worker while the first still
 *   runs it (its visibility timeout ran out, or SQS delivered it twice); the claim keeps the second from calling
 *   the provider again, and a worker that dies lets go within the lease.
 */

export const ACTIVE_INDEX = "BATCHES#ACTIVE";
export const TERMINAL_STATUSES: ReadonlySet<BatchStatus> = new Set(["failed", "completed", "expired", "cancelled"]);

/** What the engine keeps besides the StoredBatch contract. */
export interface BatchRecord extends StoredBatch {
  /** Version of the record: every change is conditional on it. */
  v: number;
  /** Gateway mode: every line has been sent to the queue (a `start` redelivered before that sends them again). */
  fannedOut?: boolean;
  /** Set when the completion window passed: lines not yet run settle as skipped, and finalise ends `expired`. */
  expiring?: boolean;
  /** Unix seconds when finalising began (the sweep redoes a finalise stuck for long). */
  finalisingSince?: number;
  /** Unix seconds when the sweep last sent a `start` again for a batch stuck validating. */
  startSentAt?: number;
}

const partition = (owner: ResourceOwner) => `BATCHES#${ownerKey(owner)}`;
const resultPartition = (batchId: string) => `BATCHRES#${batchId}`;
const claimPartition = (batchId: string) => `BATCHCLAIM#${batchId}`;
/** Line numbers up to 10^9 - 1 sort as strings. */
export const lineKey = (line: number) => String(line).padStart(9, "0");

const BATCH_ID = /^batch_[0-9a-z]{26}$/;
export const isBatchId = (id: string) => BATCH_ID.test(id);

/** Concurrent writers retry this often before giving up (each round another writer made progress). */
const MAX_ATTEMPTS = 10;

export interface StoredResult {
  line: number;
  outcome: "completed" | "failed";
  result?: BatchResultLine;
  /** Blobs key of a large result line. */
  blob?: string;
  counted: boolean;
}

export class BatchStore {
  readonly #records: Records;

  constructor(records: Records) {
    this.#records = records;
  }

  async create(record: Omit<BatchRecord, "v">): Promise<BatchRecord> {
    const stored: BatchRecord = { ...record, v: 1 };
    await this.#records.put(this.#item(stored), { exists: false });
    return stored;
  }

  /** Undefined when absent or another workspace's. */
  async get(owner: ResourceOwner, id: string): Promise<BatchRecord | undefined> {
    if (!isBatchId(id)) return undefined;
    const item = await this.#records.get(partition(owner), id);
    return item ? recordOf(item) : undefined;
  }

  /** Newest first; `after` is a batch id of an earlier page. */
  async list(
    owner: ResourceOwner,
    options: { limit: number; after?: string },
  ): Promise<{ items: BatchRecord[]; hasMore: boolean }> {
    const items: BatchRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#records.query({
        partition: partition(owner),
        order: "desc",
        ...(options.after ? { to: options.after } : {}),
        limit: Math.min(1000, options.limit + 2),
        cursor,
      });
      for (const item of page.items) if (item.sk !== options.after) items.push(recordOf(item));
      cursor = page.cursor;
    } while (cursor && items.length <= options.limit);
    return { items: items.slice(0, options.limit), hasMore: items.length > options.limit || cursor !== undefined };
  }

  /**
   * Applies `change` to the current record and writes it, conditional on the version read; re-reads and retries
   * when another writer won. `change` returns undefined to leave the record as it is (e.g. the status no longer
   * allows the change). Undefined when the batch is absent.
   */
  async mutate(
    owner: ResourceOwner,
    id: string,
    change: (current: BatchRecord) => Partial<BatchRecord> | undefined,
  ): Promise<{ record: BatchRecord; applied: boolean } | undefined> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.get(owner, id);
      if (!current) return undefined;
      const patch = change(current);
      if (!patch) return { record: current, applied: false };
      const next: BatchRecord = { ...current, ...patch, v: current.v + 1 };
      try {
        await this.#records.put(this.#item(next), { equals: { v: current.v } });
        return { record: next, applied: true };
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
      }
    }
    throw new Error(`batch ${id} kept changing while it was being updated`);
  }

  /** A page of the active index (every batch not yet terminal), for the sweep. */
  async activePage(cursor?: string): Promise<{ items: BatchRecord[]; cursor?: string }> {
    const page = await this.#records.query({ partition: ACTIVE_INDEX, index: "gsi1", limit: 100, cursor });
    return { items: page.items.map(recordOf), cursor: page.cursor };
  }

  /**
   * Writes a line's result once: false when the line already had one (a redelivered or concurrent run).
   */
  async putResult(batchId: string, result: Omit<StoredResult, "counted">, ttl: number): Promise<boolean> {
    try {
      await this.#records.put(
        {
          pk: resultPartition(batchId),
          sk: lineKey(result.line),
          line: result.line,
          outcome: result.outcome,
          ...(result.result ? { result: result.result } : {}),
          ...(result.blob ? { blob: result.blob } : {}),
          counted: false,
          ttl,
        },
        { exists: false },
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionFailedError) return false;
      throw error;
    }
  }

  /**
   * Takes the right to run a line, for `leaseSeconds` unless renewed: false while another run holds an unexpired
   * claim. `owner` names this run: only it renews or releases the claim.
   */
  async claimLine(batchId: string, line: number, owner: string, leaseSeconds: number): Promise<boolean> {
    try {
      await this.#records.put(
        { pk: claimPartition(batchId), sk: lineKey(line), owner, ttl: Math.floor(Date.now() / 1000) + leaseSeconds },
        { exists: false },
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionFailedError) return false;
      throw error;
    }
  }

  /** Extends this run's claim: false when it lapsed (expired, or another run holds the line now). */
  async renewLine(batchId: string, line: number, owner: string, leaseSeconds: number): Promise<boolean> {
    try {
      await this.#records.update(
        claimPartition(batchId),
        lineKey(line),
        { set: { ttl: Math.floor(Date.now() / 1000) + leaseSeconds } },
        { equals: { owner } },
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionFailedError) return false;
      throw error;
    }
  }

  /** Gives up this run's claim (if it still holds it). */
  async releaseLine(batchId: string, line: number, owner: string): Promise<void> {
    try {
      await this.#records.delete(claimPartition(batchId), lineKey(line), { equals: { owner } });
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }

  async getResult(batchId: string, line: number): Promise<StoredResult | undefined> {
    const item = await this.#records.get(resultPartition(batchId), lineKey(line));
    return item ? resultOf(item) : undefined;
  }

  /** Marks a result as added to the counters: false when it already was (another run counted it). */
  async markCounted(batchId: string, line: number): Promise<boolean> {
    try {
      await this.#records.update(
        resultPartition(batchId),
        lineKey(line),
        { set: { counted: true } },
        { equals: { counted: false } },
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionFailedError) return false;
      throw error;
    }
  }

  /** The results in line order, one page at a time (never the whole batch in memory). */
  async *results(batchId: string, pageSize = 100): AsyncIterable<StoredResult> {
    let cursor: string | undefined;
    do {
      const page = await this.#records.query({ partition: resultPartition(batchId), limit: pageSize, cursor });
      for (const item of page.items) yield resultOf(item);
      cursor = page.cursor;
    } while (cursor);
  }

  #item(record: BatchRecord): RecordItem {
    const active = !TERMINAL_STATUSES.has(record.batch.status);
    const item: RecordItem = {
      pk: partition(record.owner),
      sk: record.batch.id,
      ...(active ? { gsi1pk: ACTIVE_INDEX, gsi1sk: record.batch.id } : {}),
      status: record.batch.status,
      // Through JSON: attributes set to undefined (cleared) are left out, as every store adapter expects.
      record: JSON.parse(JSON.stringify(record)),
      v: record.v,
    };
    return item;
  }
}

function recordOf(item: RecordItem): BatchRecord {
  return item.record as BatchRecord;
}

function resultOf(item: RecordItem): StoredResult {
  return {
    line: Number(item.line),
    outcome: item.outcome as StoredResult["outcome"],
    ...(item.result ? { result: item.result as BatchResultLine } : {}),
    ...(typeof item.blob === "string" ? { blob: item.blob } : {}),
    counted: item.counted === true,
  };
}

const storesInUse = new WeakMap<Records, BatchStore>();

/** The process's batch store over the platform's Records. */
export function batchStoreOf(records: Records): BatchStore {
  let store = storesInUse.get(records);
  if (!store) {
    store = new BatchStore(records);
    storesInUse.set(records, store);
  }
  return store;
}
