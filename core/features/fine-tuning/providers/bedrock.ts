import { bedrockControlRequest, bucketOf, roleArnOf, s3Request, s3Uri } from "../../batches/native/bedrock-aws.ts";
import { callProviderJson, unixSeconds } from "../../batches/native/provider-http.ts";
import { UpstreamError } from "../../../providers/types.ts";
import type { FineTuningCallContext, FineTuningProviderApi, ProviderJob, ProviderJobCreate } from "../provider-api.ts";
import { invalidLine, type LineRewrite, type RewrittenFile, rewrittenFile } from "../training-lines.ts";
import type { FineTuningStatus } from "../types.ts";

/**
 * Bedrock model customisation (fine-tuning) jobs for Claude 3 Haiku and Amazon Nova
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/model-customization-prepare.html):
 *   PUT  s3://{bucket}/gateway-fine-tuning/{job}/train.jsonl (validation.jsonl)  the file rewritten to the base
 *        model family's dataset format (see `exampleOf`), Content-Length from a first pass
 *   POST /model-customization-jobs               CreateModelCustomizationJob -> {jobArn}
 *   GET  /model-customization-jobs/{jobArn}      GetModelCustomizationJob: status, outputModelArn, failureMessage
 *   POST /model-customization-jobs/{jobArn}/stop StopModelCustomizationJob
 * The provider job id is the job ARN. Bedrock has no OpenAI-style events or checkpoints: both answer an empty
 * list. No result files (Bedrock writes its metrics under the output prefix; they are not copied).
 */

const PREFIX = "gateway-fine-tuning";
/** A customisation job ARN (`...:model-customization-job/<base model>/<id>`). */
const JOB_ARN = /^arn:aws(-[a-z]+)*:bedrock:[a-z0-9-]{1,20}:\d{12}:model-customization-job\/[\w.:/-]{1,300}$/;

const STATUSES: Record<string, FineTuningStatus> = {
  InProgress: "running",
  // Cancelled only once Bedrock says so.
  Stopping: "running",
  Completed: "succeeded",
  Failed: "failed",
  Stopped: "cancelled",
};

type Family = "claude" | "nova";

interface FamilyRules {
  epochs: [number, number];
  batchSize?: [number, number];
  multiplier: [number, number];
}

/** Bedrock's documented hyperparameter ranges (custom-models-hp: Claude 3, Nova understanding models). */
const RULES: Record<Family, FamilyRules> = {
  claude: { epochs: [1, 10], batchSize: [4, 256], multiplier: [0.1, 2] },
  // Nova takes an absolute learning rate (1e-6..1e-4, default 1e-5): the multiplier scales the default.
  nova: { epochs: [1, 5], multiplier: [0.1, 10] },
};
const NOVA_DEFAULT_LEARNING_RATE = 1e-5;

function refuse(param: string, why: string, code = "unsupported_parameter"): never {
  throw new UpstreamError(400, `Bedrock fine-tuning: ${why}`, { param, code });
}

/** The family of a Bedrock base model id or ARN that the gateway can rewrite data for. */
export function familyOf(model: string): Family {
  const id = model.slice(model.lastIndexOf("/") + 1);
  if (/^anthropic\.claude-3-haiku-/.test(id)) return "claude";
  if (/^amazon\.nova-(micro|lite|pro)-/.test(id)) return "nova";
  return refuse(
    "model",
    `'${model.slice(0, 200)}' cannot be fine-tuned through the gateway: use a Claude 3 Haiku or Amazon Nova (micro, lite, pro) base model.`,
    "invalid_model",
  );
}

/** OpenAI's options Bedrock has no equivalent of are refused, never silently dropped; ranges are Bedrock's. */
function hyperParametersOf(input: ProviderJobCreate["input"], family: Family): Record<string, string> {
  if (input.method && input.method.type !== "supervised") refuse("method", "only supervised fine-tuning is supported.");
  if (input.integrations?.length) refuse("integrations", "no integrations (wandb).");
  if (input.seed !== undefined && input.seed !== null) refuse("seed", "no seed setting.");
  const rules = RULES[family];
  const out: Record<string, string> = {};
  const { n_epochs: epochs, batch_size: batch, learning_rate_multiplier: multiplier } = input.hyperparameters ?? {};
  const inRange = (value: number, [min, max]: [number, number]) => value >= min && value <= max;
  if (typeof epochs === "number") {
    if (!inRange(epochs, rules.epochs))
      refuse("hyperparameters.n_epochs", `n_epochs must be ${rules.epochs.join("-")}.`);
    out.epochCount = String(epochs);
  }
  if (typeof batch === "number") {
    if (!rules.batchSize) refuse("hyperparameters.batch_size", "Amazon Nova has no batch size setting.");
    if (!inRange(batch, rules.batchSize)) {
      refuse("hyperparameters.batch_size", `batch_size must be ${rules.batchSize.join("-")}.`);
    }
    out.batchSize = String(batch);
  }
  if (typeof multiplier === "number") {
    if (!inRange(multiplier, rules.multiplier)) {
      refuse(
        "hyperparameters.learning_rate_multiplier",
        `learning_rate_multiplier must be ${rules.multiplier.join("-")}.`,
      );
    }
    if (family === "claude") out.learningRateMultiplier = String(multiplier);
    else out.learningRate = String(multiplier * NOVA_DEFAULT_LEARNING_RATE);
  }
  return out;
}

/** The text of an OpenAI message's content (a string, or text parts only). */
function textOf(content: unknown, fail: (why: string) => never): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part: any) =>
        part?.type === "text" && typeof part.text === "string"
          ? part.text
          : fail("has a content part that is not text."),
      )
      .join("");
  }
  return fail("has a message without text content.");
}

/**
 * One training line in the family's format. An OpenAI chat line `{messages}` (system/developer messages become the
 * system prompt; user and assistant turns must alternate, from user to assistant, text only); a Nova line already
 * in `bedrock-conversation-2024` goes as it is.
 *   claude: {system?: string, messages: [{role, content: string}]}
 *   nova:   {schemaVersion: "bedrock-conversation-2024", system?: [{text}], messages: [{role, content: [{text}]}]}
 */
export function exampleOf(param: string, family: Family): LineRewrite {
  return (line, number) => {
    const fail = (why: string): never => {
      throw invalidLine(param, number, why);
    };
    if (family === "nova" && line.schemaVersion === "bedrock-conversation-2024") return line;
    if (!Array.isArray(line.messages)) fail("has no `messages`.");
    const system: string[] = typeof line.system === "string" && line.system ? [line.system] : [];
    const turns: Array<{ role: "user" | "assistant"; text: string }> = [];
    for (const message of line.messages as any[]) {
      const role = message?.role;
      if (role === "system" || role === "developer") {
        system.push(textOf(message.content, fail));
        continue;
      }
      if (role !== "user" && role !== "assistant")
        fail(`has a '${String(role).slice(0, 40)}' message: Bedrock fine-tuning takes user and assistant turns only.`);
      if (message.tool_calls || message.function_call)
        fail("has tool calls: Bedrock fine-tuning takes text turns only.");
      const expected = turns.length % 2 === 0 ? "user" : "assistant";
      if (role !== expected) fail("does not alternate user and assistant turns, starting with a user turn.");
      turns.push({ role, text: textOf(message.content, fail) });
    }
    if (turns.length < 2 || turns.at(-1)!.role !== "assistant")
      fail("does not end with an assistant turn to learn from.");
    const prompt = system.join("\n");
    if (family === "claude") {
      return {
        ...(prompt ? { system: prompt } : {}),
        messages: turns.map(({ role, text }) => ({ role, content: text })),
      };
    }
    return {
      schemaVersion: "bedrock-conversation-2024",
      ...(prompt ? { system: [{ text: prompt }] } : {}),
      messages: turns.map(({ role, text }) => ({ role, content: [{ text }] })),
    };
  };
}

/** A name Bedrock accepts for the custom model: `([0-9a-zA-Z][_-]?){1,63}`. */
export function customModelNameOf(model: string, suffix: string | null | undefined, jobId: string): string {
  const base = suffix ? `${model.slice(model.lastIndexOf("/") + 1).split(":")[0]}-${suffix}` : jobId;
  return base
    .replace(/[^0-9a-zA-Z]+/g, "-")
    .replace(/^-+/, "")
    .slice(0, 63)
    .replace(/-+$/, "");
}

/** Uploads a rewritten file to the bucket (checked and measured first: S3 wants Content-Length); its s3:// URI. */
async function uploadDataset(ctx: FineTuningCallContext, key: string, file: RewrittenFile): Promise<string> {
  const { bytes } = await file.measure();
  const request = await s3Request(ctx, "PUT", key, {
    body: file.stream(),
    length: bytes,
    contentType: "application/jsonl",
  });
  await callProviderJson(request, ctx).catch((error) => {
    // S3 answers a PUT with an empty body: only a non-2xx is a failure.
    if (error instanceof UpstreamError && error.code === "upstream_invalid_json") return;
    throw error;
  });
  return s3Uri(bucketOf(ctx.target), key);
}

function jobPath(providerJobId: string, suffix = ""): string {
  if (!JOB_ARN.test(providerJobId)) {
    throw new UpstreamError(502, "Bedrock customisation job ARN of an unexpected shape.", { type: "server_error" });
  }
  return `/model-customization-jobs/${encodeURIComponent(providerJobId)}${suffix}`;
}

const number = (value: unknown): number | undefined => {
  const parsed = typeof value === "string" && value.trim() ? Number(value) : value;
  return typeof parsed === "number" && Number.isFinite(parsed) ? parsed : undefined;
};

/** A GetModelCustomizationJob answer in OpenAI's job shape. */
export function jobOf(job: any): ProviderJob {
  const id = job?.jobArn;
  if (typeof id !== "string" || !JOB_ARN.test(id)) {
    throw new UpstreamError(502, "Bedrock answered a customisation job without a job ARN.", { type: "server_error" });
  }
  const status = STATUSES[String(job?.status)] ?? "validating_files";
  const params = job?.hyperParameters ?? {};
  const hyperparameters: Record<string, unknown> = {};
  if (number(params.epochCount) !== undefined) hyperparameters.n_epochs = number(params.epochCount);
  if (number(params.batchSize) !== undefined) hyperparameters.batch_size = number(params.batchSize);
  if (number(params.learningRateMultiplier) !== undefined) {
    hyperparameters.learning_rate_multiplier = number(params.learningRateMultiplier);
  } else if (number(params.learningRate) !== undefined) {
    hyperparameters.learning_rate_multiplier = number(params.learningRate)! / NOVA_DEFAULT_LEARNING_RATE;
  }
  const message = typeof job?.failureMessage === "string" && job.failureMessage ? job.failureMessage : undefined;
  return {
    id,
    status,
    fine_tuned_model: status === "succeeded" && typeof job?.outputModelArn === "string" ? job.outputModelArn : null,
    finished_at: unixSeconds(job?.endTime),
    error:
      status === "failed"
        ? {
            code: "bedrock_job_failed",
            message: (message ?? "The customisation job failed.").slice(0, 1000),
            param: null,
          }
        : null,
    ...(Object.keys(hyperparameters).length ? { hyperparameters } : {}),
    result_files: [],
  };
}

export const bedrockFineTuning: FineTuningProviderApi = {
  async create({ jobId, input, training, validation }, ctx) {
    const aws = ctx.target.aws;
    if (!aws?.s3Bucket) {
      refuse(
        "x-gateway-aws-s3-bucket",
        "Bedrock reads the training data from S3: send x-gateway-aws-s3-bucket.",
        "missing_storage_bucket",
      );
    }
    if (!aws?.roleArn) {
      refuse(
        "x-gateway-aws-role-arn",
        "Bedrock needs a service role to read the bucket: send x-gateway-aws-role-arn.",
        "missing_role_arn",
      );
    }
    const bucket = bucketOf(ctx.target);
    const roleArn = roleArnOf(ctx.target);
    const family = familyOf(input.model);
    const hyperParameters = hyperParametersOf(input, family);
    const folder = `${PREFIX}/${jobId}`;
    const trainingFile = rewrittenFile(ctx.services, training, "training_file", exampleOf("training_file", family));
    const validationFile = validation
      ? rewrittenFile(ctx.services, validation, "validation_file", exampleOf("validation_file", family))
      : undefined;
    // Every line of both files is checked before anything is uploaded.
    await validationFile?.measure();
    const trainingUri = await uploadDataset(ctx, `${folder}/train.jsonl`, trainingFile);
    const validationUri = validationFile
      ? await uploadDataset(ctx, `${folder}/validation.jsonl`, validationFile)
      : undefined;
    const created = await callProviderJson(
      await bedrockControlRequest(ctx, "POST", "/model-customization-jobs", {
        jobName: `gateway-${jobId}`.replace(/[^a-zA-Z0-9]+/g, "-").slice(0, 63),
        customModelName: customModelNameOf(input.model, input.suffix, jobId),
        roleArn,
        baseModelIdentifier: input.model,
        customizationType: "FINE_TUNING",
        trainingDataConfig: { s3Uri: trainingUri },
        ...(validationUri ? { validationDataConfig: { validators: [{ s3Uri: validationUri }] } } : {}),
        outputDataConfig: { s3Uri: s3Uri(bucket, `${folder}/output/`) },
        ...(Object.keys(hyperParameters).length ? { hyperParameters } : {}),
        // Idempotent: a create tried again after a lost answer gets the same job.
        clientRequestToken: jobId.replace(/[^a-zA-Z0-9]+/g, ""),
      }),
      ctx,
    );
    // CreateModelCustomizationJob answers the ARN only: the job is being validated until the first refresh.
    return jobOf({ jobArn: created?.jobArn, status: "Validating" });
  },

  async get(providerJobId, ctx) {
    return jobOf(await callProviderJson(await bedrockControlRequest(ctx, "GET", jobPath(providerJobId)), ctx));
  },

  async cancel(providerJobId, ctx) {
    await callProviderJson(await bedrockControlRequest(ctx, "POST", jobPath(providerJobId, "/stop")), ctx).catch(
      (error) => {
        // StopModelCustomizationJob answers an empty body.
        if (error instanceof UpstreamError && error.code === "upstream_invalid_json") return;
        throw error;
      },
    );
    return this.get(providerJobId, ctx);
  },

  events: async () => ({ data: [], has_more: false }),
  checkpoints: async () => ({ data: [], has_more: false }),

  async resultFile() {
    throw new UpstreamError(404, "Bedrock customisation jobs have no result files.", { code: "not_found" });
  },
};
