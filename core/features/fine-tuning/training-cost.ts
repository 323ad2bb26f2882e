import { priceOverridesFor } from "../../control/model-pricing/store.ts";
import type { Cost } from "../../inference/catalog/cost.ts";
import { OVERRIDE } from "../../inference/catalog/price-source.ts";
import type { RequestLog } from "../../observe/logs/log-record.ts";
import { costFieldsOf } from "../../observe/logs/log-request.ts";
import type { Services } from "../../services.ts";
import type { FineTuningJob, StoredFineTuningJob } from "./types.ts";

/**
 * A finished fine-tuning job is logged once as a request of its own: its trained tokens (the provider's
 * `trained_tokens`: the training file's tokens times the epochs) at the model's training price. No maintained
 * price package publishes training prices (@pydantic/genai-prices and models.dev price inference only), and a
 * table typed by hand would go stale unseen: the price is the organisation's model-pricing override (`training`,
 * USD per million trained tokens, for the job's base model), else the log says it is unpriced and why.
 */
export async function trainingCost(
  services: Services,
  stored: StoredFineTuningJob,
  trainedTokens: number,
): Promise<Cost> {
  const { principal } = stored.request;
  const overrides = priceOverridesFor(services.stores.records, principal, undefined);
  const perMillion = (await overrides(stored.provider, stored.job.model))?.training;
  if (perMillion === undefined) {
    return {
      total: 0,
      input: 0,
      output: 0,
      priced: false,
      reason:
        `No training price for ${stored.provider} model '${stored.job.model}': no maintained source publishes ` +
        "training prices; save a model-pricing override with `training` (USD per million trained tokens).",
    };
  }
  const total = (trainedTokens * perMillion) / 1_000_000;
  return { total, input: total, output: 0, priced: true, components: { training: total }, source: OVERRIDE };
}

/** The log of a job that has just finished (written once: by the writer that moved it to a final status). */
export async function logFinishedJob(
  services: Services,
  stored: StoredFineTuningJob,
  job: FineTuningJob,
): Promise<void> {
  const { principal } = stored.request;
  const trained = job.trained_tokens ?? 0;
  const cost = job.trained_tokens === null ? undefined : await trainingCost(services, stored, trained);
  const log: RequestLog = {
    id: services.logger.newLogId(),
    createdAt: new Date((job.finished_at ?? Math.floor(Date.now() / 1000)) * 1000).toISOString(),
    traceId: job.id,
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId,
    apiKeyId: principal.keyId,
    userId: principal.userId,
    metadata: { fine_tuning_job_id: job.id },
    method: "POST",
    route: "/v1/fine_tuning/jobs",
    path: "/v1/fine_tuning/jobs",
    status: job.status === "succeeded" ? 200 : job.status === "cancelled" ? 499 : 500,
    provider: stored.provider,
    requestedModel: job.model,
    answeredModel: job.fine_tuned_model ?? undefined,
    latencyMs: job.finished_at ? Math.max(0, job.finished_at - job.created_at) * 1000 : 0,
    usage:
      job.trained_tokens === null
        ? undefined
        : { promptTokens: trained, completionTokens: 0, totalTokens: trained, estimated: false },
    ...costFieldsOf(cost),
    error: job.error ? { message: job.error.message, code: job.error.code } : undefined,
    source: "gateway",
  };
  await services.logger.write(log);
}
