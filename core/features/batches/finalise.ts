import { fileStoreOf } from "../files/file-store.ts";
import type { Services } from "../../services.ts";
import { type BatchRecord, type StoredResult, batchStoreOf } from "./batch-store.ts";
import { openInput } from "./input-file.ts";
import { batchBlobPrefix, failedKey, newRequestLineId, settledKey } from "./progress.ts";
import type { BatchObject, BatchRequestCounts, BatchResultLine, BatchStatus } from "./types.ts";

/**
 * Finishing a batch: its output file (the successful lines) and error file (the failed ones) are written as
 * gateway files of the batch's workspace (purpose `batch_output`) with ids fixed by the batch id, in line order,
 * streamed from the result records a page at a time; `request_counts` are counted from the records. Then the
 * batch ends: `completed` (from in_progress, through `finalizing`), `cancelled` (from cancelling) or `expired`.
 *
 * Idempotent: a finalise that dies half way leaves the batch `finalizing` (or cancelling / expiring), and runs
 * again when its message is redelivered or the sweep finds it; files written again replace themselves. Only
 * forward status changes apply (conditional on the record's version), so two finalisers end the batch once.
 */

export const outputFileId = (batchId: string) => `file-${batchId}-output`;
export const errorFileId = (batchId: string) => `file-${batchId}-errors`;

export interface FinaliseOptions {
  /**
   * Settle every line that has no result yet as skipped (an expired batch, or a cancel that waited too long) rather
   * than waiting for the lines to settle.
   */
  force?: boolean;
  /** The error of a line settled by `force` (default: batch_expired or batch_cancelled, after the batch's state). */
  missing?: { code: string; message: string };
  now?: () => number;
}

/** The status a batch ends in once finalised, from the state it is in; undefined when it cannot finalise now. */
function endingOf(record: BatchRecord): BatchStatus | undefined {
  const status = record.batch.status;
  if (record.expiring && (status === "in_progress" || status === "finalizing" || status === "cancelling"))
    return "expired";
  if (status === "cancelling") return "cancelled";
  if (status === "in_progress" || status === "finalizing") return "completed";
  return undefined;
}

/** Returns true when the batch is finalised (now or before), false when it is not ready (lines still running). */
export async function finaliseBatch(
  services: Services,
  owner: BatchRecord["owner"],
  batchId: string,
  options: FinaliseOptions = {},
): Promise<boolean> {
  const now = options.now ?? Date.now;
  const store = batchStoreOf(services.stores.records);
  let record = await store.get(owner, batchId);
  if (!record) return true;
  const ending = endingOf(record);
  if (!ending) return record.batch.status !== "validating";
  if (options.force) await settleMissingLines(services, record, options.missing);

  const counts = await countResults(services, record);
  if (counts.completed + counts.failed < record.batch.request_counts.total) return false;

  if (ending === "completed" && record.batch.status === "in_progress") {
    const seconds = Math.floor(now() / 1000);
    const moved = await store.mutate(owner, batchId, (current) =>
      current.batch.status === "in_progress" && !current.expiring
        ? { batch: { ...current.batch, status: "finalizing", finalizing_at: seconds }, finalisingSince: seconds }
        : undefined,
    );
    if (!moved?.applied) {
      // Another finaliser moved it, or it was cancelled or expired meanwhile: run from what it is now.
      return moved ? finaliseBatch(services, owner, batchId, { ...options, force: false }) : true;
    }
    record = moved.record;
  }

  const files = await writeResultFiles(services, record, counts);
  const seconds = Math.floor(now() / 1000);
  const ended = await store.mutate(owner, batchId, (current) => {
    if (endingOf(current) !== ending) return undefined;
    const batch: BatchObject = {
      ...current.batch,
      status: ending,
      output_file_id: files.output ?? current.batch.output_file_id,
      error_file_id: files.errors ?? current.batch.error_file_id,
      request_counts: { total: current.batch.request_counts.total, ...counts },
      ...(ending === "completed" ? { completed_at: seconds } : {}),
      ...(ending === "cancelled" ? { cancelled_at: seconds } : {}),
      ...(ending === "expired" ? { expired_at: seconds } : {}),
    };
    return { batch, finalisingSince: undefined };
  });
  if (ended?.applied) await cleanUp(services, ended.record);
  return true;
}

/** Exact counts from the result records. */
async function countResults(services: Services, record: BatchRecord): Promise<Omit<BatchRequestCounts, "total">> {
  let completed = 0;
  let failed = 0;
  for await (const result of batchStoreOf(services.stores.records).results(record.batch.id, 1000)) {
    if (result.outcome === "completed") completed += 1;
    else failed += 1;
  }
  return { completed, failed };
}

/** Writes a `skipped` result for every input line without one (conditional: a line that ran meanwhile keeps its own). */
async function settleMissingLines(
  services: Services,
  record: BatchRecord,
  missing?: { code: string; message: string },
): Promise<void> {
  const store = batchStoreOf(services.stores.records);
  const error =
    missing ??
    (record.expiring
      ? { code: "batch_expired", message: "The batch expired before this request ran." }
      : { code: "batch_cancelled", message: "The batch was cancelled before this request ran." });
  const ttl = (record.batch.expires_at ?? Math.floor(Date.now() / 1000)) + 3 * 86_400;
  const input = await openInput(services, record);
  if (!input) return;
  for await (const line of input.lines()) {
    if (await store.getResult(record.batch.id, line.line)) continue;
    await store.putResult(
      record.batch.id,
      {
        line: line.line,
        outcome: "failed",
        result: { id: newRequestLineId(), custom_id: line.custom_id, response: null, error },
      },
      ttl,
    );
  }
}

async function writeResultFiles(
  services: Services,
  record: BatchRecord,
  counts: Omit<BatchRequestCounts, "total">,
): Promise<{ output?: string; errors?: string }> {
  const files = fileStoreOf(services);
  const written: { output?: string; errors?: string } = {};
  for (const [kind, outcome, count] of [
    ["output", "completed", counts.completed],
    ["errors", "failed", counts.failed],
  ] as const) {
    if (count === 0) continue;
    const id = kind === "output" ? outputFileId(record.batch.id) : errorFileId(record.batch.id);
    const stored = await files.create(record.owner, {
      id,
      filename: `${record.batch.id}_${kind === "output" ? "output" : "error"}.jsonl`,
      purpose: "batch_output",
      contentType: "application/jsonl",
      body: streamOf(resultBytes(services, record.batch.id, outcome)),
      // The gateway's own file: no upload limit applies.
      maxBytes: Number.MAX_SAFE_INTEGER,
    });
    written[kind] = stored.file.id;
  }
  return written;
}

/** A pull stream over async chunks: the next page of records is read only when the writer wants more. */
function streamOf(chunks: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/** The JSONL of one kind of result, in line order, a page of records at a time. */
async function* resultBytes(
  services: Services,
  batchId: string,
  outcome: StoredResult["outcome"],
): AsyncIterable<Uint8Array> {
  const encoder = new TextEncoder();
  let chunk = "";
  for await (const result of batchStoreOf(services.stores.records).results(batchId)) {
    if (result.outcome !== outcome) continue;
    chunk += `${JSON.stringify(await resultLine(services, result))}\n`;
    if (chunk.length >= 64 * 1024) {
      yield encoder.encode(chunk);
      chunk = "";
    }
  }
  if (chunk) yield encoder.encode(chunk);
}

async function resultLine(services: Services, result: StoredResult): Promise<BatchResultLine> {
  if (result.result) return result.result;
  const blob = result.blob ? await services.stores.blobs.get(result.blob) : undefined;
  if (!blob) throw new Error(`the result of line ${result.line} is missing from Blobs`);
  return JSON.parse(await new Response(blob.body).text()) as BatchResultLine;
}

/** Counters and large line bodies and results are not needed once the files are written (result records expire by ttl). */
async function cleanUp(services: Services, record: BatchRecord): Promise<void> {
  const { counters, blobs } = services.stores;
  await Promise.all([counters.delete(settledKey(record.batch.id)), counters.delete(failedKey(record.batch.id))]).catch(
    () => {},
  );
  const prefix = batchBlobPrefix(record.owner, record.batch.id);
  try {
    let cursor: string | undefined;
    do {
      const page = await blobs.list(prefix, { cursor });
      await Promise.all(page.items.map((item) => blobs.delete(item.key)));
      cursor = page.cursor;
    } while (cursor);
  } catch (error) {
    console.error(`batches: cleaning up ${record.batch.id} failed`, error);
  }
}
