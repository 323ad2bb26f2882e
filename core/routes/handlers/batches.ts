import { type ResourceOwner, resourceOwnerOf } from "../../auth/resource-owner.ts";
import { recordAudit } from "../../control/audit.ts";
import { fileStoreOf } from "../../features/files/file-store.ts";
import { deferRequest } from "../../inference/gateway/deferred-request.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext, Services } from "../../services.ts";
import { HttpError, badRequest, conflict, unauthorized } from "../../http/errors.ts";
import { json, readBody, validate } from "../../http/json.ts";
import { newId } from "../../util/ids.ts";
import { type BatchRecord, TERMINAL_STATUSES, batchStoreOf } from "../../features/batches/batch-store.ts";
import { BATCHES_QUEUE, type StartMessage } from "../../features/batches/messages.ts";
import { chooseBatchMode } from "../../features/batches/mode.ts";
import { cancelNative } from "../../features/batches/native-run.ts";
import { liveCounts } from "../../features/batches/progress.ts";
import {
  createBatchSchema,
  listBatchesQuery,
  updateBatchSchema,
  windowSeconds,
} from "../../features/batches/schemas.ts";
import type { BatchObject } from "../../features/batches/types.ts";

/**
 * Batches (spec 2.6, 4.1, 4.8; OpenAI's Batch API): create, list, get, cancel, and `PUT /v2/batches/:id`. A batch
 * belongs to the caller's workspace (core/auth/resource-owner.ts): any other caller gets 404, and its input file
 * must be a `batch` file of that same workspace.
 */
export const handlers: HandlerMap = {
  async createBatch(request, ctx) {
    const principal = ctx.principal;
    if (!principal) throw unauthorized("Missing or invalid API key.");
    const owner = resourceOwnerOf(principal);
    const body = await readBody(request, createBatchSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const file = await fileStoreOf(ctx.services).get(owner, body.input_file_id);
    if (!file) {
      throw new HttpError(404, `No file with id '${body.input_file_id}'.`, {
        param: "input_file_id",
        code: "not_found",
      });
    }
    if (file.file.purpose !== "batch") {
      throw badRequest(
        `The input file must have purpose 'batch' (it has '${file.file.purpose}').`,
        "input_file_id",
        "invalid_file_purpose",
      );
    }
    const { mode } = await chooseBatchMode(request, ctx, body.endpoint);
    const now = Math.floor(Date.now() / 1000);
    const batch: BatchObject = {
      id: newId("batch"),
      object: "batch",
      endpoint: body.endpoint,
      input_file_id: body.input_file_id,
      completion_window: body.completion_window,
      status: "validating",
      created_at: now,
      errors: null,
      output_file_id: null,
      error_file_id: null,
      in_progress_at: null,
      expires_at: now + windowSeconds(body.completion_window),
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: 0, completed: 0, failed: 0 },
      metadata: body.metadata ?? null,
      model: null,
    };
    const store = batchStoreOf(ctx.services.stores.records);
    await store.create({ batch, owner, mode, request: await deferRequest(request, principal, ctx.services) });
    // Lost if the process dies right here: the sweep sends it again for a batch left validating.
    const start: StartMessage = { type: "start", owner, batchId: batch.id };
    await ctx.services.stores.queue.send(BATCHES_QUEUE, start);
    return json(batch);
  },

  async listBatches(request, ctx) {
    const owner = ownerOf(ctx);
    const query = validate(listBatchesQuery, Object.fromEntries(new URL(request.url).searchParams));
    const page = await batchStoreOf(ctx.services.stores.records).list(owner, query);
    const data = await Promise.all(page.items.map((record) => present(record, ctx.services)));
    return json({
      object: "list",
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: page.hasMore,
    });
  },

  async getBatch(_request, ctx) {
    return json(await present(await load(ctx), ctx.services));
  },

  async cancelBatch(_request, ctx) {
    const current = await load(ctx);
    const seconds = Math.floor(Date.now() / 1000);
    const changed = await batchStoreOf(ctx.services.stores.records).mutate(
      current.owner,
      current.batch.id,
      (record) => {
        const status = record.batch.status;
        // Nothing runs yet: cancelled at once (a start arriving later finds it terminal).
        if (status === "validating")
          return { batch: { ...record.batch, status: "cancelled", cancelling_at: seconds, cancelled_at: seconds } };
        if (status === "in_progress")
          return { batch: { ...record.batch, status: "cancelling", cancelling_at: seconds } };
        return undefined;
      },
    );
    if (!changed) throw batchNotFound(current.batch.id);
    const status = changed.record.batch.status;
    if (!changed.applied && status !== "cancelling" && status !== "cancelled") {
      throw conflict(`The batch is ${status} and cannot be cancelled.`, "batch_id");
    }
    if (changed.applied && changed.record.mode === "native" && status === "cancelling") {
      // The provider's batch ends as cancelled; the sweep's poll sees it and finalises.
      await cancelNative(changed.record, ctx.services).catch((error) =>
        console.error(`[${ctx.traceId}] cancelling the provider's batch failed`, (error as Error).message),
      );
    }
    return json(await present(changed.record, ctx.services));
  },

  async updateBatch(request, ctx) {
    const current = await load(ctx);
    const body = await readBody(request, updateBatchSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const file = await fileStoreOf(ctx.services).get(current.owner, body.internal_output_file_id);
    if (!file) {
      throw new HttpError(404, `No file with id '${body.internal_output_file_id}'.`, {
        param: "internal_output_file_id",
        code: "not_found",
      });
    }
    const changed = await batchStoreOf(ctx.services.stores.records).mutate(
      current.owner,
      current.batch.id,
      (record) => ({
        batch: { ...record.batch, output_file_id: file.file.id },
      }),
    );
    if (!changed) throw batchNotFound(current.batch.id);
    // An administrator's change of what a batch answers with: kept in the organisation's audit log.
    await recordAudit(ctx.services.stores.records, {
      principal: ctx.principal!,
      traceId: ctx.traceId,
      action: "update",
      resourceType: "batch",
      resourceId: current.batch.id,
      workspaceId: current.owner.workspaceId || undefined,
      before: { output_file_id: current.batch.output_file_id },
      after: { output_file_id: file.file.id },
    });
    return json(await present(changed.record, ctx.services));
  },
};

function ownerOf(ctx: RequestContext): ResourceOwner {
  if (!ctx.principal) throw unauthorized("Missing or invalid API key.");
  return resourceOwnerOf(ctx.principal);
}

async function load(ctx: RequestContext): Promise<BatchRecord> {
  const id = ctx.params.id!;
  const record = await batchStoreOf(ctx.services.stores.records).get(ownerOf(ctx), id);
  if (!record) throw batchNotFound(id);
  return record;
}

const batchNotFound = (id: string) =>
  new HttpError(404, `No batch with id '${id}'.`, { param: "batch_id", code: "not_found" });

/** The Batch object; a gateway batch still running shows its counters' progress. */
async function present(record: BatchRecord, services: Services): Promise<BatchObject> {
  const batch = record.batch;
  if (record.mode !== "gateway" || TERMINAL_STATUSES.has(batch.status) || batch.status === "validating") return batch;
  const counts = await liveCounts(services, batch.id);
  const total = batch.request_counts.total;
  const failed = Math.min(counts.failed, total);
  const completed = Math.max(0, Math.min(counts.settled, total) - failed);
  return { ...batch, request_counts: { total, completed, failed } };
}
