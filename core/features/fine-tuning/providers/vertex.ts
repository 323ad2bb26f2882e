import { callProviderJson, jsonBody, unixSeconds } from "../../batches/native/provider-http.ts";
import { authHeaders, bucketOf, customBase, storageBase } from "../../batches/native/vertex.ts";
import { toGeminiRequest } from "../../../providers/google/chat.ts";
import type { TransformContext } from "../../../providers/types.ts";
import { UpstreamError } from "../../../providers/types.ts";
import { isAnthropicModel, vertexProject } from "../../../providers/vertex/index.ts";
import { vertexRegion } from "../../../providers/vertex/region.ts";
import type { FineTuningCallContext, FineTuningProviderApi, ProviderJob, ProviderJobCreate } from "../provider-api.ts";
import type { FineTuningStatus } from "../types.ts";
import { invalidLine, rewrittenFile } from "../training-lines.ts";

/**
 * Vertex AI supervised tuning for Gemini models
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/models/gemini-use-supervised-tuning):
 *   the training (and validation) file goes to the target's Cloud Storage bucket as
 *     gs://{bucket}/gateway-fine-tuning/{job}/{train|validation}.jsonl, each line a Gemini tuning example
 *     `{systemInstruction?, contents}` (OpenAI chat lines `{messages}` are rewritten with the chat -> Gemini
 *     transform; lines already in Vertex's format, with `contents`, go as they are), then
 *   POST {vertex}/v1/projects/{p}/locations/{r}/tuningJobs  {baseModel, supervisedTuningSpec, tunedModelDisplayName}
 *   GET  .../tuningJobs/{id}                                  state JOB_STATE_*, tunedModel.model, error
 *   POST .../tuningJobs/{id}:cancel
 * Vertex has no OpenAI-style events or checkpoints list: both answer an empty list. No result files.
 */

const PREFIX = "gateway-fine-tuning";
/** A tuning job id (the last segment of its resource name). */
const JOB_ID = /^[\w-]{1,128}$/;

const STATES: Record<string, FineTuningStatus> = {
  JOB_STATE_PENDING: "validating_files",
  JOB_STATE_QUEUED: "queued",
  JOB_STATE_RUNNING: "running",
  JOB_STATE_PAUSED: "running",
  JOB_STATE_UPDATING: "running",
  // Cancelled only once Vertex says so.
  JOB_STATE_CANCELLING: "running",
  JOB_STATE_SUCCEEDED: "succeeded",
  JOB_STATE_PARTIALLY_SUCCEEDED: "succeeded",
  JOB_STATE_FAILED: "failed",
  JOB_STATE_EXPIRED: "failed",
  JOB_STATE_CANCELLED: "cancelled",
};

const transformContext = (ctx: FineTuningCallContext): TransformContext => ({
  target: ctx.target,
  route: "chat",
  stream: false,
  model: "",
  now: Math.floor(Date.now() / 1000),
  requestId: "",
  includeUsage: false,
  trustedHosts: ctx.trustedHosts,
  signal: ctx.signal,
});

function tuningJobsUrl(ctx: FineTuningCallContext, suffix = ""): string {
  const tc = transformContext(ctx);
  const region = vertexRegion(tc);
  const host =
    region === "global" ? "https://aiplatform.googleapis.com" : `https://${region}-aiplatform.googleapis.com`;
  const base = customBase(ctx.target) ?? host;
  return `${base}/v1/projects/${encodeURIComponent(vertexProject(tc))}/locations/${region}/tuningJobs${suffix}`;
}

function jobPath(providerJobId: string): string {
  if (!JOB_ID.test(providerJobId)) {
    throw new UpstreamError(502, "Vertex AI tuning job id of an unexpected shape.", { type: "server_error" });
  }
  return `/${providerJobId}`;
}

/** The Gemini model a tuning job starts from (`gemini-2.0-flash-001`, with or without a `publishers/...` prefix). */
function baseModelOf(model: string): string {
  const id = model.replace(/^(publishers\/google\/)?models\//, "");
  if (!/^[\w.@-]+$/.test(id) || isAnthropicModel(id)) {
    throw new UpstreamError(400, `Vertex AI supervised tuning takes a Gemini model; '${model}' is not one.`, {
      param: "model",
      code: "invalid_model",
    });
  }
  return id;
}

/** OpenAI's options Vertex has no equivalent of are refused, never silently dropped. */
function checkOptions(input: ProviderJobCreate["input"]): void {
  const refuse = (param: string, why: string) => {
    throw new UpstreamError(400, `Vertex AI tuning jobs: ${why}`, { param, code: "unsupported_parameter" });
  };
  if (input.method && input.method.type !== "supervised") refuse("method", "only supervised tuning is supported.");
  const batchSize = input.hyperparameters?.batch_size;
  if (batchSize !== undefined && batchSize !== "auto") refuse("hyperparameters.batch_size", "no batch size setting.");
  if (input.integrations?.length) refuse("integrations", "no integrations (wandb).");
  if (input.seed !== undefined && input.seed !== null) refuse("seed", "no seed setting.");
}

/** One training line as a Gemini tuning example. */
function exampleOf(param: string, model: string) {
  return (line: Record<string, any>, number: number): Record<string, unknown> => {
    if (Array.isArray(line.contents)) return line;
    if (!Array.isArray(line.messages)) throw invalidLine(param, number, "has neither `messages` nor `contents`.");
    let request: Record<string, any>;
    try {
      request = toGeminiRequest({ messages: line.messages, tools: line.tools }, model);
    } catch (error) {
      if (error instanceof UpstreamError) throw invalidLine(param, number, `cannot be sent: ${error.message}`);
      throw error;
    }
    if (!request.contents?.some((content: any) => content?.role === "model")) {
      throw invalidLine(param, number, "has no assistant message to learn from.");
    }
    const example: Record<string, unknown> = { contents: request.contents };
    if (request.systemInstruction) example.systemInstruction = request.systemInstruction;
    if (request.tools) example.tools = request.tools;
    return example;
  };
}

/** Uploads a file (rewritten) to the bucket; answers its gs:// URI. */
async function uploadDataset(
  ctx: FineTuningCallContext,
  bucket: string,
  object: string,
  file: ReturnType<typeof rewrittenFile>,
): Promise<string> {
  await file.measure();
  const url = `${storageBase(ctx)}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o?${new URLSearchParams({
    uploadType: "media",
    name: object,
  })}`;
  await callProviderJson(
    {
      url,
      method: "POST",
      headers: { ...(await authHeaders(ctx)), "content-type": "application/jsonl" },
      body: file.stream(),
    },
    ctx,
  );
  return `gs://${bucket}/${object}`;
}

const int64 = (value: unknown): number | null => {
  const number = typeof value === "string" ? Number(value) : value;
  return typeof number === "number" && Number.isFinite(number) ? number : null;
};

/** A Vertex TuningJob in OpenAI's job shape. */
export function jobOf(tuning: any): ProviderJob {
  const id = typeof tuning?.name === "string" ? tuning.name.split("/").pop() : undefined;
  if (!id || !JOB_ID.test(id)) {
    throw new UpstreamError(502, "Vertex AI answered a tuning job without a name.", { type: "server_error" });
  }
  const status = STATES[String(tuning?.state)] ?? "validating_files";
  const spec = tuning?.supervisedTuningSpec?.hyperParameters ?? {};
  const hyperparameters: Record<string, unknown> = {};
  if (int64(spec.epochCount) !== null) hyperparameters.n_epochs = int64(spec.epochCount);
  if (typeof spec.learningRateMultiplier === "number")
    hyperparameters.learning_rate_multiplier = spec.learningRateMultiplier;
  const message = tuning?.error?.message;
  return {
    id,
    status,
    fine_tuned_model:
      status === "succeeded" && typeof tuning?.tunedModel?.model === "string" ? tuning.tunedModel.model : null,
    finished_at: unixSeconds(tuning?.endTime),
    error:
      typeof message === "string" && message
        ? { code: `vertex_${tuning.error.code ?? "error"}`, message: message.slice(0, 1000), param: null }
        : null,
    trained_tokens: int64(tuning?.tuningDataStats?.supervisedTuningDataStats?.totalBillableTokenCount),
    ...(Object.keys(hyperparameters).length ? { hyperparameters } : {}),
    result_files: [],
  };
}

export const vertexFineTuning: FineTuningProviderApi = {
  async create({ jobId, input, training, validation }, ctx) {
    const bucket = bucketOf(ctx.target);
    if (!bucket) {
      throw new UpstreamError(
        400,
        "Vertex AI tuning jobs read their data from Cloud Storage: send x-gateway-vertex-storage-bucket.",
        { param: "x-gateway-vertex-storage-bucket", code: "missing_storage_bucket" },
      );
    }
    checkOptions(input);
    const model = baseModelOf(input.model);
    const folder = `${PREFIX}/${jobId}`;
    const trainingUri = await uploadDataset(
      ctx,
      bucket,
      `${folder}/train.jsonl`,
      rewrittenFile(ctx.services, training, "training_file", exampleOf("training_file", model)),
    );
    const validationUri = validation
      ? await uploadDataset(
          ctx,
          bucket,
          `${folder}/validation.jsonl`,
          rewrittenFile(ctx.services, validation, "validation_file", exampleOf("validation_file", model)),
        )
      : undefined;
    const hyperParameters: Record<string, unknown> = {};
    const { n_epochs: epochs, learning_rate_multiplier: multiplier } = input.hyperparameters ?? {};
    if (typeof epochs === "number") hyperParameters.epochCount = epochs;
    if (typeof multiplier === "number") hyperParameters.learningRateMultiplier = multiplier;
    const body = {
      baseModel: model,
      supervisedTuningSpec: {
        trainingDatasetUri: trainingUri,
        ...(validationUri ? { validationDatasetUri: validationUri } : {}),
        ...(Object.keys(hyperParameters).length ? { hyperParameters } : {}),
      },
      tunedModelDisplayName: (input.suffix ? `${model}-${input.suffix}` : `${model}-${jobId}`).slice(0, 128),
    };
    const created = await callProviderJson(jsonBody("POST", tuningJobsUrl(ctx), await authHeaders(ctx), body), ctx);
    return jobOf(created);
  },

  async get(providerJobId, ctx) {
    const url = tuningJobsUrl(ctx, jobPath(providerJobId));
    return jobOf(await callProviderJson({ url, method: "GET", headers: await authHeaders(ctx) }, ctx));
  },

  async cancel(providerJobId, ctx) {
    const url = tuningJobsUrl(ctx, `${jobPath(providerJobId)}:cancel`);
    await callProviderJson(jsonBody("POST", url, await authHeaders(ctx), {}), ctx);
    return this.get(providerJobId, ctx);
  },

  events: async () => ({ data: [], has_more: false }),
  checkpoints: async () => ({ data: [], has_more: false }),

  async resultFile() {
    throw new UpstreamError(404, "Vertex AI tuning jobs have no result files.", { code: "not_found" });
  },
};
