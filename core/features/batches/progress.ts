import type { ResourceOwner } from "../../auth/resource-owner.ts";
import { newId } from "../../util/ids.ts";
import type { Services } from "../../services.ts";
import { type BatchRecord, type StoredResult, batchStoreOf, lineKey } from "./batch-store.ts";
import { BATCHES_QUEUE, type FinaliseMessage } from "./messages.ts";
import type { BatchResultLine } from "./types.ts";

/**
 * Settling a line (gateway mode): its result is written once (core/features/batches/batch-store.ts putResult), then added to
 * the batch's counters (settled, failed) and marked counted. The count comes before the mark: a run that dies
 * between the two counts the line again when redelivered (an over-count, never an under-count), and finalise
 * recounts from the result records anyway, so counters only decide when to try finalising: when settled reaches
 * the total, a `finalise` message is sent.
 */

/** A result line larger than this goes to Blobs (a Records item must stay well under 400 KB). */
const MAX_INLINE_RESULT = 200 * 1024;
/** Result records and counters outlive the completion window by this much (finalise has run by then). */
const KEEP_AFTER_EXPIRY_SECONDS = 3 * 86_400;

export const settledKey = (batchId: string) => `batch#${batchId}#settled`;
export const failedKey = (batchId: string) => `batch#${batchId}#failed`;

export const batchBlobPrefix = (owner: ResourceOwner, batchId: string) =>
  `batches/${encodeURIComponent(owner.organisationId)}/${encodeURIComponent(owner.workspaceId || "_")}/${batchId}/`;

const keepUntil = (record: BatchRecord) =>
  (record.batch.expires_at ?? Math.floor(Date.now() / 1000)) + KEEP_AFTER_EXPIRY_SECONDS;

/** A new output line id, as OpenAI's (`batch_req_...`). */
export const newRequestLineId = () => newId("batch_req");

/**
 * Writes the line's result unless it has one, then makes sure it is counted. Returns whether this call wrote it.
 */
export async function settleLine(
  services: Services,
  record: BatchRecord,
  line: number,
  result: BatchResultLine,
): Promise<boolean> {
  const store = batchStoreOf(services.stores.records);
  const batchId = record.batch.id;
  const outcome = result.error || !result.response || result.response.status_code >= 400 ? "failed" : "completed";
  const text = JSON.stringify(result);
  let blob: string | undefined;
  if (text.length > MAX_INLINE_RESULT) {
    blob = `${batchBlobPrefix(record.owner, batchId)}results/${lineKey(line)}.json`;
    await services.stores.blobs.put(blob, text, { contentType: "application/json" });
  }
  const wrote = await store.putResult(batchId, { line, outcome, ...(blob ? { blob } : { result }) }, keepUntil(record));
  if (wrote) await countLine(services, record, { line, outcome, counted: false });
  else await ensureCounted(services, record, line);
  return wrote;
}

/** For a line that already has a result (a redelivery): counts it if no run did yet, and finalises if due. */
export async function ensureCounted(services: Services, record: BatchRecord, line: number): Promise<void> {
  const stored = await batchStoreOf(services.stores.records).getResult(record.batch.id, line);
  if (!stored) return;
  if (!stored.counted) return countLine(services, record, stored);
  const settled = await services.stores.counters.get(settledKey(record.batch.id));
  if (settled >= record.batch.request_counts.total) await requestFinalise(services, record.owner, record.batch.id);
}

async function countLine(services: Services, record: BatchRecord, stored: StoredResult): Promise<void> {
  const { counters } = services.stores;
  const batchId = record.batch.id;
  const expiresAt = keepUntil(record);
  if (stored.outcome === "failed") await counters.add(failedKey(batchId), 1, { expiresAt });
  const settled = await counters.add(settledKey(batchId), 1, { expiresAt });
  await batchStoreOf(services.stores.records).markCounted(batchId, stored.line);
  if (settled.value >= record.batch.request_counts.total) await requestFinalise(services, record.owner, batchId);
}

export async function requestFinalise(services: Services, owner: ResourceOwner, batchId: string): Promise<void> {
  const message: FinaliseMessage = { type: "finalise", owner, batchId };
  await services.stores.queue.send(BATCHES_QUEUE, message);
}

/** The counters' view of a running batch (live `request_counts`; finalise replaces it with the exact count). */
export async function liveCounts(services: Services, batchId: string): Promise<{ settled: number; failed: number }> {
  const values = await services.stores.counters.getMany([settledKey(batchId), failedKey(batchId)]);
  return { settled: values.get(settledKey(batchId)) ?? 0, failed: values.get(failedKey(batchId)) ?? 0 };
}
