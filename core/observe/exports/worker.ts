import { ConditionFailedError, MAX_RECEIVES, type QueueMessage } from "../../store/ports.ts";
import type { Services, QueueConsumer } from "../../services.ts";
import { type LogExport, deniedFields, exportLine, logExportStore, needsBodies, toLogFilter } from "./log-exports.ts";

const PAGE = 100;
/** An export larger than this fails with a message to narrow the filters (it is built in memory). */
const MAX_EXPORT_BYTES = 256 * 1024 * 1024;

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
  const lines: string[] = [];
  let bytes = 0;
  let cursor: string | undefined;
  do {
    const page = await services.logger.list(organisationId, filter, PAGE, cursor);
    for (const summary of page.items) {
      const log = withBodies && summary.bodiesKey ? ((await services.logger.get(summary.id)) ?? summary) : summary;
      const line = exportLine(log, fields);
      bytes += line.length + 1;
      if (bytes > MAX_EXPORT_BYTES) throw new ExportTooLarge();
      lines.push(line);
    }
    cursor = page.cursor;
    // Cancelled meanwhile: stop without writing.
    const latest = await store.get(organisationId, exportId);
    if (latest?.status !== "running") return;
  } while (cursor);

  const blobKey = exportBlobKey(current);
  await services.stores.blobs.put(blobKey, lines.length ? `${lines.join("\n")}\n` : "", {
    contentType: "application/x-ndjson",
  });
  const latest = await store.get(organisationId, exportId);
  if (latest?.status !== "running") return;
  await store.update(latest, {
    status: "success",
    lineCount: lines.length,
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
