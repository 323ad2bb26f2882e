import { fileStoreOf } from "../files/file-store.ts";
import { providerKeyOf } from "../files/provider-key.ts";
import type { Services } from "../../services.ts";
import { MAX_RECEIVES } from "../../store/ports.ts";
import { type BatchRecord, batchStoreOf } from "./batch-store.ts";
import { maxLineBytes, openInput } from "./input-file.ts";
import { BATCHES_QUEUE, type LineMessage, type StartMessage } from "./messages.ts";
import { nativeContextOf } from "./native-run.ts";
import { batchBlobPrefix } from "./progress.ts";
import type { BatchError, BatchObject, StoredBatch } from "./types.ts";
import { checkInput } from "./validate-input.ts";

/** A line body larger than this is put in Blobs and the message names it (SQS messages are at most 256 KB). */
const MAX_INLINE_BODY = 200 * 1024;
/** Most bytes of line messages sent in one sendBatch call (SQS limits a batch's total size too). */
const MAX_SEND_BYTES = 200 * 1024;
const SEND_BATCH = 10;

/**
 * A `start` message: validates the input file (streamed, every line), then fails the batch with `errors.data[]`,
 * hands it to the provider (native mode) or fans its lines out on the queue (gateway mode). Idempotent: a batch
 * past `validating` is not validated again, and a gateway batch whose lines were not all sent yet (a start that
 * died half way) sends them again (lines are settled once whatever the number of their messages).
 */
export async function runStartMessage(message: StartMessage, attempts: number, services: Services): Promise<void> {
  const store = batchStoreOf(services.stores.records);
  let record = await store.get(message.owner, message.batchId);
  if (!record) return;
  if (record.batch.status === "validating") {
    const next = await validate(record, attempts, services);
    if (!next) return;
    record = next;
  }
  if (record.mode === "gateway" && record.batch.status === "in_progress" && !record.fannedOut) {
    await fanOut(record, services);
  }
}

async function validate(record: BatchRecord, attempts: number, services: Services): Promise<BatchRecord | undefined> {
  const input = await openInput(services, record);
  if (!input) {
    return fail(services, record, [
      { code: "input_file_missing", message: "The input file was deleted.", param: "input_file_id", line: null },
    ]);
  }
  const check = await checkInput(await input.content(), record.batch.endpoint, {
    maxLines: services.settings.GATEWAY_BATCH_MAX_LINES,
    maxLineBytes: maxLineBytes(services),
  });
  if (check.errors.length > 0) return fail(services, record, check.errors, check.total);
  const store = batchStoreOf(services.stores.records);
  const seconds = Math.floor(Date.now() / 1000);
  const counts = { total: check.total, completed: 0, failed: 0 };
  /** validating -> in_progress (unless the batch moved on meanwhile: cancelled), with its native run if any. */
  const inProgress = async (requestCounts: BatchObject["request_counts"], native?: StoredBatch["native"]) => {
    const moved = await store.mutate(record.owner, record.batch.id, (current) =>
      current.batch.status === "validating"
        ? {
            batch: {
              ...current.batch,
              status: "in_progress",
              in_progress_at: seconds,
              request_counts: requestCounts,
              model: check.model,
            },
            ...(native ? { native } : {}),
          }
        : undefined,
    );
    return moved?.applied ? moved.record : undefined;
  };

  if (record.mode === "native") {
    let submitted: Awaited<ReturnType<typeof submitNative>>;
    try {
      submitted = await submitNative(record, input, services);
    } catch (error) {
      // A provider's refusal (4xx) fails the batch; anything else is tried again, then fails it.
      const status = (error as { status?: unknown }).status;
      const refused = typeof status === "number" && status >= 400 && status < 500 && status !== 408 && status !== 429;
      if (!refused && attempts < MAX_RECEIVES) throw error;
      return fail(services, record, [
        {
          code: "provider_error",
          message: `The provider did not accept the batch: ${(error as Error).message}`.slice(0, 500),
          param: null,
          line: null,
        },
      ]);
    }
    // The total is the validated line count, whatever the provider says while it validates.
    return inProgress({ ...(submitted.state.request_counts ?? counts), total: counts.total }, submitted);
  }
  return inProgress(counts);
}

async function submitNative(
  record: BatchRecord,
  input: NonNullable<Awaited<ReturnType<typeof openInput>>>,
  services: Services,
): Promise<NonNullable<BatchRecord["native"]>> {
  const { api, ctx } = await nativeContextOf(record, services, AbortSignal.timeout(services.settings.REQUEST_TIMEOUT));
  const submitted = await api.submit(
    {
      batchId: record.batch.id,
      endpoint: record.batch.endpoint,
      completionWindow: record.batch.completion_window,
      metadata: record.batch.metadata,
      inputFile: input.file,
      lines: input.lines,
      content: input.content,
    },
    ctx,
  );
  // The adapter uploaded the input file itself: link that copy, so the next batch of the same file reuses it.
  if (submitted.providerFileId) {
    await fileStoreOf(services)
      .linkProviderFile(record.owner, input.file.file.id, providerKeyOf(ctx.target), submitted.providerFileId)
      .catch((error) => console.error(`batch ${record.batch.id}: linking the provider's input copy failed`, error));
  }
  return {
    provider: ctx.target.provider,
    providerBatchId: submitted.providerBatchId,
    ...(submitted.providerFileId ? { providerFileId: submitted.providerFileId } : {}),
    state: submitted.state,
  };
}

async function fail(services: Services, record: BatchRecord, errors: BatchError[], total = 0): Promise<undefined> {
  const seconds = Math.floor(Date.now() / 1000);
  await batchStoreOf(services.stores.records).mutate(record.owner, record.batch.id, (current) =>
    current.batch.status === "validating"
      ? {
          batch: {
            ...current.batch,
            status: "failed",
            failed_at: seconds,
            errors: { object: "list", data: errors },
            request_counts: { total, completed: 0, failed: 0 },
          },
        }
      : undefined,
  );
  return undefined;
}

/** Sends every line as a `line` message, a few at a time, then marks the batch fanned out. */
async function fanOut(record: BatchRecord, services: Services): Promise<void> {
  const input = await openInput(services, record);
  if (!input) {
    // Deleted after validation: the lines cannot be read again. The sweep ends the batch at its expiry.
    console.error(`batches: the input file of ${record.batch.id} was deleted before its lines were sent`);
    return;
  }
  const { queue, blobs } = services.stores;
  let pending: LineMessage[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    if (pending.length === 0) return;
    await queue.sendBatch(BATCHES_QUEUE, pending);
    pending = [];
    pendingBytes = 0;
  };
  for await (const line of input.lines()) {
    const message: LineMessage = {
      type: "line",
      owner: record.owner,
      batchId: record.batch.id,
      line: line.line,
      customId: line.custom_id,
    };
    const text = JSON.stringify(line.body);
    const bytes = Buffer.byteLength(text);
    let size = bytes + Buffer.byteLength(line.custom_id) + 200;
    if (bytes > MAX_INLINE_BODY) {
      message.bodyBlob = `${batchBlobPrefix(record.owner, record.batch.id)}lines/${line.line}.json`;
      await blobs.put(message.bodyBlob, text, { contentType: "application/json" });
      size = 400 + Buffer.byteLength(line.custom_id);
    } else message.body = line.body;
    if (pending.length === SEND_BATCH || pendingBytes + size > MAX_SEND_BYTES) await flush();
    pending.push(message);
    pendingBytes += size;
  }
  await flush();
  await batchStoreOf(services.stores.records).mutate(record.owner, record.batch.id, (current) =>
    current.fannedOut ? undefined : { fannedOut: true },
  );
}
