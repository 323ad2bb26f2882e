import type { ResourceOwner } from "../../auth/resource-owner.ts";
import type { ProviderCallOptions } from "../batches/native/provider-http.ts";
import { fileStoreOf } from "../files/file-store.ts";
import { providerKeyOf } from "../files/provider-key.ts";
import type { StoredFile } from "../files/types.ts";
import { type DeferredRequest, replayRequest, singleTargetOf } from "../../inference/gateway/deferred-request.ts";
import { upstreamToHttp } from "../../inference/gateway/plan.ts";
import type { RequestContext, Services } from "../../services.ts";
import { badRequest, HttpError } from "../../http/errors.ts";
import { type ProviderTarget, UpstreamError } from "../../providers/types.ts";
import { fineTuningJobStoreOf, newJobId } from "./job-store.ts";
import type { FineTuningCallContext } from "./provider-api.ts";
import { fineTuningApiFor } from "./provider-registry.ts";
import type { CreateJobInput } from "./schemas.ts";
import {
  FINE_TUNING_STATUSES,
  type FineTuningJob,
  type FineTuningStatus,
  type StoredFineTuningJob,
  TERMINAL_FINE_TUNING_STATUSES,
} from "./types.ts";

/**
 * The fine-tuning service: jobs created at the provider the create call names (one target), recorded in the
 * caller's workspace, and refreshed from the provider (on read while running, and by the scheduled task). The
 * training and validation files are the caller's gateway files (made available at the provider with
 * ensureProviderFile); the provider's result files are copied into the workspace's files, so the job shows gateway
 * ids only. Later provider calls reach the provider with the create call's routing (deferRequest). Each provider's
 * API is behind provider-api.ts, which answers jobs in OpenAI's shape.
 */

export function providerOptions(services: Services, signal: AbortSignal): ProviderCallOptions {
  return { trustedHosts: services.trustedHosts, signal, timeoutMs: services.settings.REQUEST_TIMEOUT };
}

/** What a provider call of the fine-tuning API needs. */
export function callContext(services: Services, target: ProviderTarget, signal: AbortSignal): FineTuningCallContext {
  return { ...providerOptions(services, signal), target, services };
}

/** Runs a provider call, its failures answered as the client's errors (the provider's status and message). */
export async function providerCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof UpstreamError) throw upstreamToHttp(error, {});
    throw error;
  }
}

/** A gateway file of the caller's workspace with purpose `fine-tune`, else 400 naming the param. */
async function trainingFileOf(
  services: Services,
  owner: ResourceOwner,
  id: string,
  param: string,
): Promise<StoredFile> {
  const stored = await fileStoreOf(services).get(owner, id);
  if (!stored) {
    throw badRequest(
      `Invalid '${param}': no file with id '${id}' in this workspace. Upload it with POST /v1/files (purpose 'fine-tune').`,
      param,
      "file_not_found",
    );
  }
  if (stored.file.purpose !== "fine-tune") {
    throw badRequest(
      `Invalid '${param}': file '${id}' has purpose '${stored.file.purpose}'; fine-tuning takes files of purpose 'fine-tune'.`,
      param,
      "invalid_file_purpose",
    );
  }
  return stored;
}

const STATUS_ALIASES: Record<string, FineTuningStatus> = {
  // Azure OpenAI's older job statuses.
  created: "validating_files",
  pending: "queued",
  notrunning: "queued",
  canceled: "cancelled",
};

function statusOf(value: unknown, previous: FineTuningStatus): FineTuningStatus {
  const status = String(value ?? "").toLowerCase();
  if ((FINE_TUNING_STATUSES as readonly string[]).includes(status)) return status as FineTuningStatus;
  return STATUS_ALIASES[status] ?? previous;
}

const numberOrNull = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : null);
const stringOrNull = (value: unknown) => (typeof value === "string" && value ? value : null);

function errorOf(value: any): FineTuningJob["error"] {
  if (!value || typeof value !== "object" || !value.message) return null;
  return {
    code: String(value.code ?? "provider_error"),
    message: String(value.message),
    param: typeof value.param === "string" ? value.param : null,
  };
}

/** The provider's job merged into the gateway's: the gateway keeps its own ids, owner and request fields. */
export function mergeProviderJob(
  current: FineTuningJob,
  provider: any,
  resultFiles: Record<string, string>,
): FineTuningJob {
  const status = statusOf(provider?.status, current.status);
  const providerResults: unknown[] = Array.isArray(provider?.result_files) ? provider.result_files : [];
  return {
    ...current,
    status,
    error: status === "failed" ? (errorOf(provider?.error) ?? current.error) : errorOf(provider?.error),
    fine_tuned_model: stringOrNull(provider?.fine_tuned_model) ?? current.fine_tuned_model,
    finished_at: numberOrNull(provider?.finished_at) ?? current.finished_at,
    hyperparameters:
      provider?.hyperparameters && typeof provider.hyperparameters === "object"
        ? provider.hyperparameters
        : current.hyperparameters,
    result_files: providerResults.flatMap((id) => (typeof id === "string" && resultFiles[id] ? [resultFiles[id]] : [])),
    trained_tokens: numberOrNull(provider?.trained_tokens) ?? current.trained_tokens,
    seed: numberOrNull(provider?.seed) ?? current.seed,
    estimated_finish: TERMINAL_FINE_TUNING_STATUSES.has(status) ? null : numberOrNull(provider?.estimated_finish),
    ...(provider?.method && typeof provider.method === "object" ? { method: provider.method } : {}),
  };
}

/** The provider target of a job's create call, resolved again (credentials are never stored in the clear). */
export async function targetOfJob(
  request: DeferredRequest,
  services: Services,
  signal: AbortSignal,
): Promise<ProviderTarget> {
  const replay = await replayRequest(request, services, { path: "/v1/fine_tuning/jobs", signal });
  const target = await singleTargetOf(replay.request, replay.ctx);
  if (!target) {
    throw new HttpError(409, "The routing this job was created with no longer names one provider.", {
      code: "routing_changed",
    });
  }
  return target;
}

export async function createJob(
  input: CreateJobInput,
  request: Request,
  ctx: RequestContext,
  owner: ResourceOwner,
  deferred: () => Promise<DeferredRequest>,
): Promise<FineTuningJob> {
  const { services } = ctx;
  const target = await singleTargetOf(request, ctx);
  if (!target) {
    throw badRequest(
      "Fine-tuning needs exactly one provider: send x-gateway-provider with its credentials, a saved provider, or a config with a single target.",
      "x-gateway-provider",
      "missing_provider",
    );
  }
  const api = await fineTuningApiFor(target);
  const training = await trainingFileOf(services, owner, input.training_file, "training_file");
  const validation = input.validation_file
    ? await trainingFileOf(services, owner, input.validation_file, "validation_file")
    : undefined;
  const jobId = newJobId();
  const created = await providerCall(() =>
    api.create({ jobId, input, training, validation }, callContext(services, target, ctx.signal)),
  );
  if (typeof created?.id !== "string" || !created.id) {
    throw new HttpError(502, "The provider answered a fine-tuning job without an id.", {
      code: "upstream_invalid_response",
    });
  }

  const base: FineTuningJob = {
    id: jobId,
    object: "fine_tuning.job",
    created_at: Math.floor(Date.now() / 1000),
    error: null,
    fine_tuned_model: null,
    finished_at: null,
    hyperparameters: input.hyperparameters ?? {},
    model: input.model,
    organization_id: owner.organisationId,
    result_files: [],
    status: "validating_files",
    trained_tokens: null,
    training_file: training.file.id,
    validation_file: validation?.file.id ?? null,
    seed: input.seed ?? null,
    integrations: input.integrations ?? [],
    estimated_finish: null,
    user_provided_suffix: input.suffix ?? null,
    ...(input.method ? { method: input.method } : {}),
    metadata: input.metadata ?? null,
  };
  const job = mergeProviderJob(base, created, {});
  await fineTuningJobStoreOf(services).create({
    job,
    owner,
    request: await deferred(),
    provider: target.provider,
    providerJobId: created.id,
    resultFiles: {},
    revision: 1,
  });
  return job;
}

/**
 * Copies the provider's result files the gateway does not have yet into the owner's files (purpose
 * `fine-tune-results`, fixed ids so a copy made twice is one file), linked to the provider's ids.
 */
async function copyResultFiles(
  services: Services,
  stored: StoredFineTuningJob,
  target: ProviderTarget,
  provider: any,
  signal: AbortSignal,
): Promise<Record<string, string>> {
  const ids: unknown[] = Array.isArray(provider?.result_files) ? provider.result_files : [];
  const copied = { ...stored.resultFiles };
  if (!ids.some((id) => typeof id === "string" && !copied[id])) return copied;
  const files = fileStoreOf(services);
  const api = await fineTuningApiFor(target);
  for (const providerFileId of ids) {
    if (typeof providerFileId !== "string" || copied[providerFileId]) continue;
    const { filename, body } = await api.resultFile(providerFileId, callContext(services, target, signal));
    const id = `file-${stored.job.id}-result-${Object.keys(copied).length + 1}`;
    await files.create(stored.owner, { id, filename, purpose: "fine-tune-results", contentType: "text/csv", body });
    await files.linkProviderFile(stored.owner, id, providerKeyOf(target), providerFileId);
    copied[providerFileId] = id;
  }
  return copied;
}

/**
 * The job as the provider sees it now, stored. A finished job is answered as it is. When another writer got there
 * first, their version is answered.
 */
export async function refreshJob(
  services: Services,
  stored: StoredFineTuningJob,
  signal: AbortSignal,
  target?: ProviderTarget,
): Promise<StoredFineTuningJob> {
  if (TERMINAL_FINE_TUNING_STATUSES.has(stored.job.status)) return stored;
  const resolved = target ?? (await targetOfJob(stored.request, services, signal));
  const api = await fineTuningApiFor(resolved);
  const provider = await api.get(stored.providerJobId, callContext(services, resolved, signal));
  return storeProviderJob(services, stored, resolved, provider, signal);
}

/** Stores what the provider answered about a job (a refresh, a cancel). */
export async function storeProviderJob(
  services: Services,
  stored: StoredFineTuningJob,
  target: ProviderTarget,
  provider: any,
  signal: AbortSignal,
): Promise<StoredFineTuningJob> {
  const resultFiles = await copyResultFiles(services, stored, target, provider, signal);
  const job = mergeProviderJob(stored.job, provider, resultFiles);
  const store = fineTuningJobStoreOf(services);
  const updated = await store.update(stored, { job, resultFiles });
  return updated ?? (await store.get(stored.owner, stored.job.id)) ?? stored;
}

export async function cancelJob(
  services: Services,
  stored: StoredFineTuningJob,
  signal: AbortSignal,
): Promise<StoredFineTuningJob> {
  if (TERMINAL_FINE_TUNING_STATUSES.has(stored.job.status)) {
    throw badRequest(
      `Job ${stored.job.id} has already ${stored.job.status === "cancelled" ? "been cancelled" : stored.job.status === "failed" ? "failed" : "succeeded"}.`,
      "fine_tuning_job_id",
      "job_finished",
    );
  }
  const target = await targetOfJob(stored.request, services, signal);
  const api = await fineTuningApiFor(target);
  const provider = await providerCall(() => api.cancel(stored.providerJobId, callContext(services, target, signal)));
  // Some providers answer `cancelling`-like states first: the job shows cancelled once the provider says so.
  return storeProviderJob(services, stored, target, provider, signal);
}
