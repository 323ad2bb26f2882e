import { randomUUID } from "node:crypto";
import { batchPriceFactor } from "../../inference/catalog/batch-discount.ts";
import { priceUsage } from "../../inference/catalog/load.ts";
import { replayRequest, singleTargetOf } from "../../inference/gateway/deferred-request.ts";
import type { RequestLog } from "../../observe/logs/log-record.ts";
import { costFieldsOf, logRetentionOf, usageForLog } from "../../observe/logs/log-request.ts";
import type { ChatUsage } from "../../providers/types.ts";
import type { Services } from "../../services.ts";
import { type BatchRecord, TERMINAL_STATUSES, batchStoreOf } from "./batch-store.ts";
import { finaliseBatch } from "./finalise.ts";
import { openInput } from "./input-file.ts";
import { nativeBatchApiFor } from "./native/registry.ts";
import { newRequestLineId } from "./progress.ts";
import type { BatchResultLine, NativeBatchApi, NativeBatchContext, NativeBatchState } from "./types.ts";

/**
 * The engine's side of native batches: the provider adapter (core/features/batches/native/*) is reached with the create
 * call's routing (its credentials resolved again each time, never stored in the clear); the engine keeps the
 * record, turns the provider's results into result records (line order comes from the input's custom ids), logs
 * each result line as a request with its usage and cost (at the provider's batch price), then finalises the batch
 * as gateway-run batches are.
 */

export async function nativeContextOf(
  record: BatchRecord,
  services: Services,
  signal: AbortSignal,
): Promise<{ api: NativeBatchApi; ctx: NativeBatchContext }> {
  const replay = await replayRequest(record.request, services, { path: "/v1/batches", signal });
  const target = await singleTargetOf(replay.request, replay.ctx);
  if (!target) throw new Error("the batch's routing no longer names a single provider");
  const api = await nativeBatchApiFor(target.provider);
  if (!api) throw new Error(`provider '${target.provider}' has no batch API`);
  return {
    api,
    ctx: { target, trustedHosts: services.trustedHosts, signal, timeoutMs: services.settings.REQUEST_TIMEOUT },
  };
}

/** Asks the provider to cancel (after the record moved to `cancelling`); the poll sees it end. */
export async function cancelNative(record: BatchRecord, services: Services): Promise<void> {
  if (!record.native) return;
  const { api, ctx } = await nativeContextOf(record, services, AbortSignal.timeout(services.settings.REQUEST_TIMEOUT));
  await api.cancel(record.native.providerBatchId, record.native.state, ctx);
}

const PROVIDER_DONE = new Set(["completed", "expired", "cancelled", "failed"]);

/** One poll of a native batch (the sweep's): progress is recorded; a finished provider batch is finalised. */
export async function pollNative(
  record: BatchRecord,
  services: Services,
  signal: AbortSignal,
  now: () => number = Date.now,
): Promise<void> {
  if (!record.native || TERMINAL_STATUSES.has(record.batch.status) || record.batch.status === "validating") return;
  const store = batchStoreOf(services.stores.records);
  const { api, ctx } = await nativeContextOf(record, services, signal);
  const native = record.native;
  const state = await api.poll(native.providerBatchId, native.state, ctx);
  const seconds = Math.floor(now() / 1000);

  if (!PROVIDER_DONE.has(state.status)) {
    await store.mutate(record.owner, record.batch.id, (current) => {
      if (TERMINAL_STATUSES.has(current.batch.status) || !current.native) return undefined;
      const finalizing = state.status === "finalizing" && current.batch.status === "in_progress";
      return {
        native: { ...current.native, state },
        batch: {
          ...current.batch,
          // The provider's progress; the total stays the validated line count (a provider may say 0 while it
          // validates the input itself).
          ...(state.request_counts
            ? { request_counts: { ...state.request_counts, total: current.batch.request_counts.total } }
            : {}),
          ...(finalizing ? { status: "finalizing", finalizing_at: seconds } : {}),
        },
      };
    });
    return;
  }

  if (state.status === "failed") {
    await store.mutate(record.owner, record.batch.id, (current) =>
      TERMINAL_STATUSES.has(current.batch.status) || !current.native
        ? undefined
        : {
            native: { ...current.native, state },
            batch: {
              ...current.batch,
              status: "failed",
              failed_at: seconds,
              errors: {
                object: "list",
                data: state.errors ?? [
                  { code: "provider_error", message: "The provider's batch failed.", param: null, line: null },
                ],
              },
            },
          },
    );
    return;
  }

  await collectResults(record, state, api, ctx, services);
  // The provider's batch is over: ends as the provider's did (expired and cancelled keep their partial results).
  const ended = await store.mutate(record.owner, record.batch.id, (current) => {
    if (TERMINAL_STATUSES.has(current.batch.status) || !current.native) return undefined;
    return {
      native: { ...current.native, state },
      expiring: state.status === "expired" ? true : current.expiring,
      batch: {
        ...current.batch,
        status: state.status === "cancelled" ? "cancelling" : "finalizing",
        ...(current.batch.finalizing_at ? {} : { finalizing_at: seconds }),
      },
    };
  });
  if (!ended) return;
  await finaliseBatch(services, record.owner, record.batch.id, {
    force: true,
    missing:
      state.status === "completed"
        ? { code: "missing_result", message: "The provider returned no result for this request." }
        : undefined,
    now,
  });
}

/** Writes the provider's result lines as result records (once each), logging each new one as a request. */
async function collectResults(
  record: BatchRecord,
  state: NativeBatchState,
  api: NativeBatchApi,
  ctx: NativeBatchContext,
  services: Services,
): Promise<void> {
  const input = await openInput(services, record);
  if (!input) throw new Error(`the input file of ${record.batch.id} was deleted`);
  const lines = new Map<string, { line: number; body: Record<string, any> }>();
  for await (const line of input.lines()) lines.set(line.custom_id, { line: line.line, body: line.body });
  const store = batchStoreOf(services.stores.records);
  const ttl = Math.floor(Date.now() / 1000) + 7 * 86_400;
  for await (const result of api.results(record.native!.providerBatchId, state, ctx)) {
    const input = lines.get(result.custom_id);
    if (!input) {
      console.warn(`batches: ${record.batch.id}: the provider returned an unknown custom_id`);
      continue;
    }
    const failed = result.error !== null || !result.response || result.response.status_code >= 400;
    const line: BatchResultLine = { ...result, id: result.id || newRequestLineId() };
    const wrote = await store.putResult(
      record.batch.id,
      { line: input.line, outcome: failed ? "failed" : "completed", result: line },
      ttl,
    );
    if (wrote) await logNativeLine(record, input.body, line, ctx.target.provider, services);
  }
}

/** Usage of an answer in any of the batch endpoints' shapes (chat, completions, embeddings, responses, messages). */
function usageOf(body: unknown): ChatUsage | undefined {
  const usage = (body as { usage?: Record<string, any> } | null)?.usage;
  if (!usage || typeof usage !== "object") return undefined;
  const prompt = Number(usage.prompt_tokens ?? usage.input_tokens ?? 0) || 0;
  const completion = Number(usage.completion_tokens ?? usage.output_tokens ?? 0) || 0;
  const cached =
    Number(
      usage.prompt_tokens_details?.cached_tokens ??
        usage.input_tokens_details?.cached_tokens ??
        usage.cache_read_input_tokens ??
        0,
    ) || 0;
  const cacheWrite = Number(usage.cache_creation_input_tokens ?? 0) || 0;
  // Anthropic counts cache reads and writes apart from input_tokens; OpenAI's prompt tokens include them.
  const anthropicStyle = usage.cache_read_input_tokens !== undefined || usage.cache_creation_input_tokens !== undefined;
  const promptTokens = anthropicStyle ? prompt + cached + cacheWrite : prompt;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: Number(usage.total_tokens) || promptTokens + completion,
    prompt_tokens_details: { cached_tokens: cached, ...(cacheWrite ? { cache_creation_tokens: cacheWrite } : {}) },
    completion_tokens_details: {
      reasoning_tokens:
        Number(
          usage.completion_tokens_details?.reasoning_tokens ?? usage.output_tokens_details?.reasoning_tokens ?? 0,
        ) || 0,
    },
  };
}

async function logNativeLine(
  record: BatchRecord,
  requestBody: Record<string, any>,
  result: BatchResultLine,
  provider: string,
  services: Services,
): Promise<void> {
  const principal = record.request.principal;
  const answer = result.response?.body as Record<string, any> | undefined;
  const usage = usageOf(answer);
  const requestedModel = typeof requestBody.model === "string" ? requestBody.model : undefined;
  const answeredModel = typeof answer?.model === "string" ? answer.model : undefined;
  const model = answeredModel ?? requestedModel;
  // The catalog (price data) is loaded on first use, off the batches function's and workers' cold start.
  const cost =
    usage && model
      ? await priceUsage(provider, model, usage, undefined, { batchFactor: batchPriceFactor(provider) })
      : undefined;
  const log: RequestLog = {
    id: services.logger.newLogId(),
    createdAt: new Date().toISOString(),
    traceId: result.response?.request_id || randomUUID(),
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId,
    apiKeyId: principal.keyId,
    userId: principal.userId,
    metadata: { batch_id: record.batch.id, custom_id: result.custom_id.slice(0, 512) },
    method: "POST",
    route: record.batch.endpoint,
    path: record.batch.endpoint,
    status: result.response?.status_code ?? 500,
    provider,
    requestedModel,
    answeredModel,
    stream: false,
    latencyMs: 0,
    usage: usage ? usageForLog(usage, false) : undefined,
    ...costFieldsOf(cost),
    error: result.error ? { message: result.error.message, code: result.error.code } : undefined,
    requestBody: services.settings.GATEWAY_LOG_BODIES ? requestBody : undefined,
    responseBody: services.settings.GATEWAY_LOG_BODIES ? answer : undefined,
    source: "gateway",
  };
  await services.logger.write(log, await logRetentionOf(services, principal));
}
