import { ConditionFailedError, MAX_RECEIVES, type QueueMessage } from "../store/ports.ts";
import type { Services } from "../services.ts";
import type { QueueConsumer } from "../workers/queue-consumer.ts";
import { type LogExport, deniedFields, exportLine, logExportStore, needsBodies, toLogFilter } from "./log-exports.ts";

const PAGE = 100;
/**
 * An export larger than this fails with a message to narrow the filters. It is streamed to the blob store a page
 * at a time (never held whole in memory); the bound keeps one export from filling the store.
 */
const MAX_EXPORT_BYTES = 1024 * 1024 * 1024;

export const exportBlobKey = (logExport: LogExport) => `exports/${logExport.organisationId}/${logExport.id}.jsonl`;

/**
 * The `exports` queue consumer: writes one export's JSONL (only the requested fields that are still allowed)
 * to Blobs and moves it to success. Idempotent under at-least-once delivery: an export that is not queued or
 * running (done, failed, cancelled) is skipped, the blob key is fixed per export (a redelivery overwrites it),
 * and status changes are conditional on the version read. Transient failures are retried; after the last
 * receive the export is marked failed.
 */
export const consumeExports: QueueConsumer = async (messages, services) => {
  const failedIds: string[] = [];
  for (const message of messages) {
    try {
      await runExport(message, services);
    } catch (error) {
      console.error(`exports: job ${message.id} failed`, error);
      if (!(error instanceof ExportTooLarge) && message.attempts < MAX_RECEIVES) failedIds.push(message.id);
      else await markFailed(message, services, (error as Error).message).catch(() => {});
    }
  }
  return { failedIds };
};

async function runExport(message: QueueMessage, services: Services): Promise<void> {
  const { exportId, organisationId } = (message.body ?? {}) as { exportId?: string; organisationId?: string };
  if (!exportId || !organisationId) return;
  const store = logExportStore(services.stores.records);
  let current = await store.get(organisationId, exportId);
  if (!current || (current.status !== "queued" && current.status !== "running")) return;
  current = await store.update(current, { status: "running", startedAt: Math.floor(Date.now() / 1000), error: null });

  const denied = new Set((await deniedFields(services.stores.records, organisationId, current.workspaceId)).fields);
  const fields = current.requestedData.filter((field) => !denied.has(field));
  const withBodies = needsBodies(fields);
  const filter = toLogFilter(current);
  const blobKey = exportBlobKey(current);
  let lineCount = 0;
  let bytes = 0;
  let cursor: string | undefined;
  // Why the stream stopped, when it was the export's doing (the blob store may report it otherwise).
  let stopped: "cancelled" | ExportTooLarge | undefined;
  const encoder = new TextEncoder();
  // The JSONL goes to the blob store as the log search pages come (each a bounded, indexed read: the sink's
  // search); cancelling the export meanwhile fails the stream, and the blob store then keeps nothing of it.
  const lines = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const page = await services.logger.list(organisationId, filter, PAGE, cursor);
      let chunk = "";
      for (const summary of page.items) {
        // Searches answer logs without their bodies: read by id when the export wants them.
        const log = withBodies ? ((await services.logger.get(summary.id)) ?? summary) : summary;
        const line = `${exportLine(log, fields)}\n`;
        bytes += line.length;
        if (bytes > MAX_EXPORT_BYTES) {
          stopped = new ExportTooLarge();
          throw stopped;
        }
        chunk += line;
        lineCount++;
      }
      cursor = page.cursor;
      const latest = await store.get(organisationId, exportId);
      if (latest?.status !== "running") {
        stopped = "cancelled";
        throw new Error("export cancelled");
      }
      if (chunk) controller.enqueue(encoder.encode(chunk));
      if (!cursor) controller.close();
    },
  });
  try {
    await services.stores.blobs.put(blobKey, lines, { contentType: "application/x-ndjson" });
  } catch (error) {
    // Cancelled meanwhile: stop without writing.
    if (stopped === "cancelled") return;
    throw stopped ?? error;
  }
  const latest = await store.get(organisationId, exportId);
  if (latest?.status !== "running") return;
  await store.update(latest, {
    status: "success",
    lineCount,
    blobKey,
    finishedAt: Math.floor(Date.now() / 1000),
  });
}

class ExportTooLarge extends Error {
  constructor() {
    super(`the export is larger than ${MAX_EXPORT_BYTES} bytes; narrow its filters or fields`);
  }
}

async function markFailed(message: QueueMessage, services: Services, reason: string): Promise<void> {
  const { exportId, organisationId } = (message.body ?? {}) as { exportId?: string; organisationId?: string };
  if (!exportId || !organisationId) return;
  const store = logExportStore(services.stores.records);
  const current = await store.get(organisationId, exportId);
  if (!current || (current.status !== "queued" && current.status !== "running")) return;
  try {
    await store.update(current, { status: "failed", error: reason, finishedAt: Math.floor(Date.now() / 1000) });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
  }
}
