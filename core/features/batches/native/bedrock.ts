import { Readable } from "node:stream";
import { fromAnthropicMessage, toAnthropicMessagesRequest } from "../../../providers/anthropic/messages.ts";
import { isBedrockAnthropicModel, toBedrockMessagesBody } from "../../../providers/bedrock/invoke-messages.ts";
import type { ProviderTarget, TransformContext } from "../../../providers/types.ts";
import { UpstreamError } from "../../../providers/types.ts";
import type {
  BatchEndpoint,
  BatchInputLine,
  BatchResultLine,
  NativeBatchApi,
  NativeBatchContext,
  NativeBatchState,
} from "../types.ts";
import { bedrockControlRequest, bucketOf, hasBatchSetup, jobIdOf, roleArnOf, s3Request, s3Uri } from "./bedrock-aws.ts";
import { callProviderJson, providerJsonLines } from "./provider-http.ts";
import { errorLine, resultLineId, noteRefused, refusedResults, type RefusedLine } from "./result-lines.ts";

/**
 * Bedrock batch inference (model invocation jobs) for Anthropic Claude models on Bedrock:
 *   PUT  s3://{bucket}/gateway-batches/{batch}/input.jsonl       `{recordId, modelInput}` lines (InvokeModel bodies)
 *   PUT  s3://{bucket}/gateway-batches/{batch}/records.jsonl     `{recordId, custom_id}`: Bedrock's record ids are
 *                                                                short alphanumerics, so the lines' ids are kept here
 *   POST /model-invocation-job                                   CreateModelInvocationJob -> {jobArn}
 *   GET  /model-invocation-job/{jobArn}                          GetModelInvocationJob -> status, message
 *   POST /model-invocation-job/{jobArn}/stop                     StopModelInvocationJob
 *   GET  s3://{bucket}/gateway-batches/{batch}/output/{jobId}/input.jsonl.out  `{recordId, modelInput, modelOutput | error}`
 * `/v1/chat/completions` lines go through the chat -> Anthropic transform (their results come back as chat
 * completions); `/v1/messages` lines go as they are. A job runs one model: every line must name the same Claude
 * model. Objects are written streamed, in passes over the input (lengths first: S3 wants Content-Length).
 */

const SUPPORTED: ReadonlySet<BatchEndpoint> = new Set(["/v1/chat/completions", "/v1/messages"]);
const PREFIX = "gateway-batches";
const INPUT_NAME = "input.jsonl";

interface BedrockDetails {
  endpoint: BatchEndpoint;
  model: string;
  jobArn?: string;
  /** The keys of the batch's objects in the target's bucket. */
  inputKey: string;
  recordsKey: string;
  outputPrefix: string;
  refused?: RefusedLine[];
  job_status?: string;
  message?: string;
}

interface EncodedLine {
  input: string;
  record: string;
}

/** Bedrock's record id of a line: 11 alphanumerics, from the line number (unique within the file). */
export const recordIdOf = (line: number) => `R${String(line).padStart(10, "0")}`;

/** A job name Bedrock accepts (`[a-zA-Z0-9](-*[a-zA-Z0-9+.-])*`, at most 63) from the batch id. */
const jobNameOf = (batchId: string) => `gateway-${batchId.replace(/[^a-zA-Z0-9]+/g, "-")}`.slice(0, 63);

function detailsOf(state: NativeBatchState): BedrockDetails {
  return (state.details ?? {}) as unknown as BedrockDetails;
}

function modelInputOf(line: BatchInputLine, endpoint: BatchEndpoint, target: ProviderTarget): Record<string, any> {
  const ctx = { target } as TransformContext;
  const messages =
    endpoint === "/v1/messages" ? line.body : toAnthropicMessagesRequest(line.body, { model: line.body.model });
  return toBedrockMessagesBody(messages, ctx);
}

/**
 * The lines as they go to S3 (refused lines are noted in `details` and skipped). The same on every pass: the
 * transform is pure.
 */
async function* encodedLines(
  lines: AsyncIterable<BatchInputLine>,
  details: BedrockDetails,
  target: ProviderTarget,
  recordRefused: boolean,
): AsyncGenerator<EncodedLine> {
  for await (const line of lines) {
    if (line.body.model !== details.model) {
      throw new UpstreamError(
        400,
        `A Bedrock batch job runs one model: line ${line.line} names '${String(line.body.model).slice(0, 200)}', not '${details.model}'.`,
        { param: "model", code: "mixed_models" },
      );
    }
    let modelInput: Record<string, any>;
    try {
      modelInput = modelInputOf(line, details.endpoint, target);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      if (recordRefused) {
        details.refused ??= [];
        noteRefused(
          details.refused,
          { custom_id: line.custom_id, code: error.code ?? "invalid_request", message: error.message },
          "Bedrock",
        );
      }
      continue;
    }
    const recordId = recordIdOf(line.line);
    yield {
      input: `${JSON.stringify({ recordId, modelInput })}\n`,
      record: `${JSON.stringify({ recordId, custom_id: line.custom_id })}\n`,
    };
  }
}

async function putObject(
  ctx: NativeBatchContext,
  key: string,
  length: number,
  chunks: () => AsyncIterable<string>,
): Promise<void> {
  const request = await s3Request(ctx, "PUT", key, {
    body: Readable.from(chunks()),
    length,
    contentType: "application/jsonl",
  });
  await callProviderJson(request, ctx).catch((error) => {
    // S3 answers a PUT with an empty body: only a non-2xx is a failure.
    if (error instanceof UpstreamError && error.code === "upstream_invalid_json") return;
    throw error;
  });
}

function stateOf(job: any, details: BedrockDetails): NativeBatchState {
  const status = String(job?.status ?? "Submitted");
  const message = typeof job?.message === "string" ? job.message.slice(0, 500) : undefined;
  const next: BedrockDetails = { ...details, job_status: status, ...(message ? { message } : {}) };
  const mapped: Record<string, NativeBatchState["status"]> = {
    Completed: "completed",
    PartiallyCompleted: "completed",
    Failed: "failed",
    Stopping: "cancelling",
    Stopped: "cancelled",
    Expired: "expired",
  };
  const state: NativeBatchState = { status: mapped[status] ?? "in_progress", details: { ...next } };
  if (state.status === "failed") {
    state.errors = [
      { code: "provider_error", message: message ?? "The Bedrock batch job failed.", param: null, line: null },
    ];
  }
  return state;
}

function errorType(status: number): string {
  if (status === 401 || status === 403) return "authentication_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** One `.out` line as an OpenAI output line. */
function resultLine(jobId: string, item: any, customId: string, details: BedrockDetails, now: number): BatchResultLine {
  const id = resultLineId(jobId, customId);
  if (item?.modelOutput && typeof item.modelOutput === "object") {
    const message = item.modelOutput;
    let body: unknown = message;
    if (details.endpoint === "/v1/chat/completions") {
      try {
        body = fromAnthropicMessage(message, {
          now,
          model: String(message.model ?? details.model),
          requestId: String(message.id ?? id),
        });
      } catch (error) {
        return errorLine(jobId, customId, "invalid_provider_output", (error as Error).message);
      }
    }
    return {
      id,
      custom_id: customId,
      response: { status_code: 200, request_id: String(message.id ?? id), body },
      error: null,
    };
  }
  const error = item?.error ?? {};
  const code = Number(error.errorCode);
  const status = Number.isInteger(code) && code >= 400 && code <= 599 ? code : 500;
  const message = String(error.errorMessage ?? "Bedrock returned no output for this record.");
  const type = errorType(status);
  return {
    id,
    custom_id: customId,
    response: { status_code: status, request_id: id, body: { error: { message, type, param: null, code: type } } },
    error: null,
  };
}

export const bedrockBatches: NativeBatchApi = {
  supports(target, endpoint) {
    return target.provider === "bedrock" && SUPPORTED.has(endpoint) && hasBatchSetup(target);
  },

  async submit(submission, ctx) {
    const bucket = bucketOf(ctx.target);
    const roleArn = roleArnOf(ctx.target);
    let model: string | undefined;
    for await (const line of submission.lines()) {
      model = line.body.model;
      break;
    }
    if (typeof model !== "string" || !isBedrockAnthropicModel(model)) {
      throw new UpstreamError(
        400,
        "Bedrock batches run natively for Anthropic Claude models only; run this batch in the gateway (x-gateway-batch-mode: gateway).",
        { param: "model", code: "unsupported_model" },
      );
    }
    const root = `${PREFIX}/${submission.batchId}`;
    const details: BedrockDetails = {
      endpoint: submission.endpoint,
      model,
      inputKey: `${root}/${INPUT_NAME}`,
      recordsKey: `${root}/records.jsonl`,
      outputPrefix: `${root}/output/`,
    };
    // Pass 1: lengths (and refused lines); passes 2 and 3 stream the two objects.
    let inputBytes = 0;
    let recordBytes = 0;
    let records = 0;
    for await (const line of encodedLines(submission.lines(), details, ctx.target, true)) {
      inputBytes += Buffer.byteLength(line.input);
      recordBytes += Buffer.byteLength(line.record);
      records++;
    }
    if (records === 0) {
      throw new UpstreamError(400, "No line of the batch can be sent to Bedrock.", { code: "unsupported_lines" });
    }
    const pass = (field: keyof EncodedLine) =>
      async function* () {
        for await (const line of encodedLines(submission.lines(), details, ctx.target, false)) yield line[field];
      };
    await putObject(ctx, details.recordsKey, recordBytes, pass("record"));
    await putObject(ctx, details.inputKey, inputBytes, pass("input"));

    const hours = /^(\d+)h$/.exec(submission.completionWindow)?.[1];
    const job = await callProviderJson(
      await bedrockControlRequest(ctx, "POST", "/model-invocation-job", {
        jobName: jobNameOf(submission.batchId),
        // Idempotent: a submit tried again after a lost answer gets the same job.
        clientRequestToken: submission.batchId.replace(/[^a-zA-Z0-9]+/g, ""),
        roleArn,
        modelId: model,
        inputDataConfig: { s3InputDataConfig: { s3Uri: s3Uri(bucket, details.inputKey), s3InputFormat: "JSONL" } },
        outputDataConfig: { s3OutputDataConfig: { s3Uri: s3Uri(bucket, details.outputPrefix) } },
        ...(hours ? { timeoutDurationInHours: Math.min(168, Math.max(24, Number(hours))) } : {}),
      }),
      ctx,
    );
    if (typeof job?.jobArn !== "string") {
      throw new UpstreamError(502, "Bedrock answered a batch job without a jobArn.", { type: "server_error" });
    }
    jobIdOf(job.jobArn);
    details.jobArn = job.jobArn;
    return {
      providerBatchId: job.jobArn,
      state: {
        status: "in_progress",
        request_counts: { total: records, completed: 0, failed: 0 },
        details: { ...details },
      },
    };
  },

  async poll(providerBatchId, previous, ctx) {
    const job = await callProviderJson(
      await bedrockControlRequest(ctx, "GET", `/model-invocation-job/${encodeURIComponent(providerBatchId)}`),
      ctx,
    );
    return stateOf(job, detailsOf(previous));
  },

  async *results(providerBatchId, state, ctx) {
    const details = detailsOf(state);
    const jobId = jobIdOf(providerBatchId);
    yield* refusedResults(jobId, details.refused);
    const customIds = new Map<string, string>();
    for await (const item of providerJsonLines(await s3Request(ctx, "GET", details.recordsKey), ctx)) {
      if (typeof item?.recordId === "string" && typeof item.custom_id === "string") {
        customIds.set(item.recordId, item.custom_id);
      }
    }
    const now = Math.floor(Date.now() / 1000);
    const outputKey = `${details.outputPrefix}${jobId}/${INPUT_NAME}.out`;
    try {
      for await (const item of providerJsonLines(await s3Request(ctx, "GET", outputKey), ctx)) {
        const customId = typeof item?.recordId === "string" ? customIds.get(item.recordId) : undefined;
        if (customId !== undefined) yield resultLine(jobId, item, customId, details, now);
      }
    } catch (error) {
      // A job stopped or expired before it wrote any output has no output object: its lines are missing.
      if (!(error instanceof UpstreamError && error.status === 404 && state.status !== "completed")) throw error;
    }
  },

  async cancel(providerBatchId, _state, ctx) {
    await callProviderJson(
      await bedrockControlRequest(ctx, "POST", `/model-invocation-job/${encodeURIComponent(providerBatchId)}/stop`),
      ctx,
    ).catch((error) => {
      if (error instanceof UpstreamError && error.code === "upstream_invalid_json") return;
      throw error;
    });
  },
};
