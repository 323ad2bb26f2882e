import type { Services } from "../../services.ts";
import { type BatchRecord, TERMINAL_STATUSES, batchStoreOf } from "./batch-store.ts";
import { finaliseBatch } from "./finalise.ts";
import { BATCHES_QUEUE, type StartMessage } from "./messages.ts";
import { pollNative } from "./native-run.ts";
import { liveCounts } from "./progress.ts";

/** A batch still validating this long after its last start message gets another (the first may be lost). */
const RESTART_AFTER_SECONDS = 10 * 60;
/** A finalise (or a cancel waiting for its lines) stuck this long is run again by the sweep. */
const STUCK_AFTER_SECONDS = 5 * 60;
const CANCEL_WAIT_SECONDS = 10 * 60;

export interface SweepOptions {
  /** Unix ms; tests move time (e.g. past a batch's expiry). */
  now?: () => number;
}

/**
 * The `batches` scheduled task: over the active index (every batch not yet terminal), ends what the queue alone
 * would not: batches past `expires_at` expire (lines not run settle as skipped `batch_expired`, partial results
 * kept in the files), gateway batches whose lines are all settled but never finalised (or whose finalise died)
 * are finalised, a cancel whose lines never settled is forced, a lost start is sent again, and native batches
 * are polled and, once the provider's batch ended, finalised with its results. Safe in two places at once: every
 * change is a conditional write.
 */
export async function sweepBatches(services: Services, signal: AbortSignal, options: SweepOptions = {}): Promise<void> {
  const store = batchStoreOf(services.stores.records);
  let cursor: string | undefined;
  do {
    const page = await store.activePage(cursor);
    for (const record of page.items) {
      if (signal.aborted) return;
      try {
        await sweepOne(record, services, signal, options.now ?? Date.now);
      } catch (error) {
        console.error(`batches: sweeping ${record.batch.id} failed`, error);
      }
    }
    cursor = page.cursor;
  } while (cursor);
}

async function sweepOne(
  record: BatchRecord,
  services: Services,
  signal: AbortSignal,
  now: () => number,
): Promise<void> {
  if (TERMINAL_STATUSES.has(record.batch.status)) return;
  const seconds = Math.floor(now() / 1000);
  const store = batchStoreOf(services.stores.records);
  const { owner } = record;
  const id = record.batch.id;
  const expired = record.batch.expires_at !== null && record.batch.expires_at <= seconds;

  if (record.batch.status === "validating") {
    if (expired) {
      await store.mutate(owner, id, (current) =>
        current.batch.status === "validating"
          ? { batch: { ...current.batch, status: "expired", expired_at: seconds } }
          : undefined,
      );
      return;
    }
    const since = record.startSentAt ?? record.batch.created_at;
    if (seconds - since >= RESTART_AFTER_SECONDS) {
      const marked = await store.mutate(owner, id, (current) =>
        current.batch.status === "validating" && current.v === record.v ? { startSentAt: seconds } : undefined,
      );
      if (marked?.applied) {
        const message: StartMessage = { type: "start", owner, batchId: id };
        await services.stores.queue.send(BATCHES_QUEUE, message);
      }
    }
    return;
  }

  if (record.mode === "native") return pollNative(record, services, signal, now);

  if (expired || record.expiring) {
    if (!record.expiring) {
      const marked = await store.mutate(owner, id, (current) =>
        TERMINAL_STATUSES.has(current.batch.status) ? undefined : { expiring: true },
      );
      if (!marked?.applied) return;
    }
    await finaliseBatch(services, owner, id, { force: true, now });
    return;
  }
  if (record.batch.status === "finalizing") {
    if (seconds - (record.finalisingSince ?? 0) >= STUCK_AFTER_SECONDS)
      await finaliseBatch(services, owner, id, { now });
    return;
  }
  if (record.batch.status === "cancelling") {
    const waited = seconds - (record.batch.cancelling_at ?? seconds);
    await finaliseBatch(services, owner, id, { force: waited >= CANCEL_WAIT_SECONDS, now });
    return;
  }
  // in_progress: finalise once the counters say every line settled (finalise recounts from the records).
  const counts = await liveCounts(services, id);
  if (record.fannedOut && counts.settled >= record.batch.request_counts.total) {
    await finaliseBatch(services, owner, id, { now });
  }
}
