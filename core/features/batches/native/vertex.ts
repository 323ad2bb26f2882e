import { Readable } from "node:stream";
import { fromGeminiResponse, toGeminiRequest } from "../../../providers/google/chat.ts";
import type { ProviderTarget, TransformContext } from "../../../providers/types.ts";
import { UpstreamError } from "../../../providers/types.ts";
import { vertexAccessToken } from "../../../providers/vertex/auth.ts";
import { isAnthropicModel, vertexProject } from "../../../providers/vertex/index.ts";
import { vertexRegion } from "../../../providers/vertex/region.ts";
import type {
  BatchEndpoint,
  BatchInputLine,
  BatchResultLine,
  NativeBatchApi,
  NativeBatchContext,
  NativeBatchState,
} from "../types.ts";
import { callProviderJson, jsonBody, providerJsonLines } from "./provider-http.ts";
import {
  RenamedIds,
  count,
  errorLine,
  resultLineId,
  noteRefused,
  refusedResults,
  type RefusedLine,
} from "./result-lines.ts";

/**
 * Vertex AI batch prediction for Gemini models
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/batch-prediction-from-cloud-storage):
 *   the lines, as `{"request": <GenerateContentRequest>}`, are uploaded to the target's Cloud Storage bucket
 *     (JSON API media upload), then
 *   POST {vertex}/v1/projects/{p}/locations/{r}/batchPredictionJobs   {displayName, model, inputConfig, outputConfig}
 *   GET  .../batchPredictionJobs/{id}                                  -> state, completionStats
 *   POST .../batchPredictionJobs/{id}:cancel
 *   the results are the `.jsonl` objects Vertex writes under the job's output prefix, each line
 *     `{status, processed_time, request, response}` (status empty on success, an error message otherwise).
 * Vertex echoes each line's request, so a line's custom_id travels in the request's `labels`; custom_ids that are
 * not valid label values are renamed, and restored from the batch state. Results are listed and read under the
 * prefix the adapter chose, never under the directory the job names (an answer must not send the gateway elsewhere).
 * A job runs one model: every line must name the same Gemini model.
 */

/** The label that carries a line's custom_id. */
const CUSTOM_ID_LABEL = "gateway_custom_id";
/** Vertex label values: at most 63 lowercase letters, digits, `_` and `-`. */
const LABEL_VALUE = /^[a-z0-9_-]{1,63}$/;
const RENAMED_PREFIX = "gw-line-";
/** GCS bucket names (https://cloud.google.com/storage/docs/buckets#naming), the dotted form included. */
const BUCKET_NAME = /^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/;
/** A Vertex job id (the last segment of its resource name). */
const JOB_ID = /^[\w-]{1,128}$/;
const GCS_HOST = "https://storage.googleapis.com";

interface VertexDetails {
  endpoint: BatchEndpoint;
  model: string;
  bucket: string;
  /** Object prefix the job writes its results under (no `gs://bucket/`). */
  outputPrefix: string;
  /** Lines sent. */
  total: number;
  renamed?: Record<string, string>;
  refused?: RefusedLine[];
  job_state?: string;
}

const transformContext = (ctx: NativeBatchContext, model = ""): TransformContext => ({
  target: ctx.target,
  route: "chat",
  stream: false,
  model,
  now: Math.floor(Date.now() / 1000),
  requestId: "",
  includeUsage: false,
  trustedHosts: ctx.trustedHosts,
  signal: ctx.signal,
});

export function bucketOf(target: ProviderTarget): string | undefined {
  const bucket = target.vertex?.storageBucket?.trim();
  return bucket && BUCKET_NAME.test(bucket) && !bucket.includes("..") ? bucket : undefined;
}

/** The custom host (already SSRF-checked) serves both APIs in tests and private proxies; else Google's hosts. */
export function customBase(target: ProviderTarget): string | undefined {
  return target.customHost?.replace(/\/+$/, "").replace(/\/v1(beta1)?$/, "");
}

function jobsUrl(ctx: NativeBatchContext, suffix = ""): string {
  const tc = transformContext(ctx);
  const region = vertexRegion(tc);
  const project = vertexProject(tc);
  const host =
    region === "global" ? "https://aiplatform.googleapis.com" : `https://${region}-aiplatform.googleapis.com`;
  const base = customBase(ctx.target) ?? host;
  return `${base}/v1/projects/${encodeURIComponent(project)}/locations/${region}/batchPredictionJobs${suffix}`;
}

export function storageBase(ctx: NativeBatchContext): string {
  return customBase(ctx.target) ?? GCS_HOST;
}

export async function authHeaders(ctx: NativeBatchContext): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await vertexAccessToken(transformContext(ctx))}` };
}

function jobPath(providerBatchId: string): string {
  if (!JOB_ID.test(providerBatchId)) {
    throw new UpstreamError(502, "Vertex AI answered a batch prediction job id of an unexpected shape.", {
      type: "server_error",
    });
  }
  return `/${providerBatchId}`;
}

function detailsOf(state: NativeBatchState): VertexDetails {
  return (state.details ?? {}) as unknown as VertexDetails;
}

/** int64 fields come as strings in Google's JSON. */
const int64 = (value: unknown): number => count(typeof value === "string" ? Number(value) : value);

const STATES: Record<string, NativeBatchState["status"]> = {
  JOB_STATE_SUCCEEDED: "completed",
  JOB_STATE_PARTIALLY_SUCCEEDED: "completed",
  JOB_STATE_FAILED: "failed",
  JOB_STATE_CANCELLING: "cancelling",
  JOB_STATE_CANCELLED: "cancelled",
  JOB_STATE_EXPIRED: "expired",
};

/** A BatchPredictionJob in the gateway's terms (queued, pending, running, paused, updating: in progress). */
function stateOf(job: any, details: VertexDetails): NativeBatchState {
  const jobState = String(job?.state ?? "JOB_STATE_PENDING");
  const status = STATES[jobState] ?? "in_progress";
  const stats = job?.completionStats ?? {};
  const refused = details.refused?.length ?? 0;
  const completed = int64(stats.successfulCount);
  const failed = int64(stats.failedCount) + refused;
  const state: NativeBatchState = {
    status,
    request_counts: { total: details.total + refused, completed, failed },
    details: { ...details, job_state: jobState },
  };
  if (status === "failed") {
    const message = typeof job?.error?.message === "string" ? job.error.message : "The Vertex AI batch job failed.";
    state.errors = [{ code: "provider_batch_failed", message: message.slice(0, 1000), param: null, line: null }];
  }
  return state;
}

/** The GenerateContentRequest of one chat line, its custom_id in the labels. Throws UpstreamError when refused. */
function requestOf(line: BatchInputLine, model: string, labelValue: string): Record<string, unknown> {
  const request = toGeminiRequest(line.body, model);
  return { ...request, labels: { [CUSTOM_ID_LABEL]: labelValue } };
}

/** The label value a line's custom_id travels as (the same on both passes over the lines). */
function labelValueOf(line: BatchInputLine): string {
  const customId = line.custom_id;
  return LABEL_VALUE.test(customId) && !customId.startsWith(RENAMED_PREFIX)
    ? customId
    : `${RENAMED_PREFIX}${line.line}`;
}

const modelOf = (line: BatchInputLine): string =>
  typeof line.body.model === "string" ? line.body.model.replace(/^(publishers\/google\/)?models\//, "") : "";

/**
 * First pass over the lines, before anything reaches Cloud Storage: the batch's one model, the renamed custom_ids,
 * the lines the transform refuses (their numbers are answered). Everything that would refuse the whole batch
 * throws here, so an upload never stops half-way.
 */
async function planLines(lines: AsyncIterable<BatchInputLine>, details: VertexDetails): Promise<Set<number>> {
  const refusedLines = new Set<number>();
  const renamed = new RenamedIds(
    details,
    "Too many custom_id values Vertex AI cannot carry (label values are 1-63 of [a-z0-9_-]); rename them or run the batch in the gateway (x-gateway-batch-mode: gateway).",
  );
  for await (const line of lines) {
    const model = modelOf(line);
    if (!details.model) details.model = model;
    if (model !== details.model || !model || isAnthropicModel(model) || !/^[\w.@-]+$/.test(model)) {
      throw new UpstreamError(
        400,
        `A Vertex AI batch runs one Gemini model; line ${line.line} names ${JSON.stringify(line.body.model)} (the batch: ${JSON.stringify(details.model)}). Split the batch or run it in the gateway (x-gateway-batch-mode: gateway).`,
        { code: "invalid_model", param: "model" },
      );
    }
    const labelValue = labelValueOf(line);
    if (labelValue !== line.custom_id) renamed.add(labelValue, line.custom_id);
    try {
      requestOf(line, model, labelValue);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      details.refused ??= [];
      noteRefused(
        details.refused,
        { custom_id: line.custom_id, code: error.code ?? "invalid_request", message: error.message },
        "Vertex AI",
      );
      refusedLines.add(line.line);
      continue;
    }
    details.total++;
  }
  return refusedLines;
}

/** The input JSONL (second pass), written as the lines are read, never held whole. */
function inputLines(lines: AsyncIterable<BatchInputLine>, model: string, refusedLines: Set<number>): Readable {
  async function* chunks(): AsyncGenerator<string> {
    for await (const line of lines) {
      if (refusedLines.has(line.line)) continue;
      yield `${JSON.stringify({ request: requestOf(line, model, labelValueOf(line)) })}\n`;
    }
  }
  return Readable.from(chunks());
}

/** One line of the job's output as an OpenAI output line. */
function resultLine(
  providerBatchId: string,
  item: any,
  details: VertexDetails,
  ctx: NativeBatchContext,
): BatchResultLine | undefined {
  const sent = item?.request?.labels?.[CUSTOM_ID_LABEL];
  if (typeof sent !== "string") return undefined;
  const customId = details.renamed?.[sent] ?? sent;
  const id = resultLineId(providerBatchId, customId);
  const status = typeof item.status === "string" ? item.status : "";
  if (status || !item.response) {
    return errorLine(providerBatchId, customId, "vertex_request_failed", status || "Vertex AI gave no response.");
  }
  try {
    const tc = { ...transformContext(ctx, details.model), requestId: id };
    const body = fromGeminiResponse(item.response, tc);
    const requestId = typeof item.response.responseId === "string" ? item.response.responseId : id;
    return { id, custom_id: customId, response: { status_code: 200, request_id: requestId, body }, error: null };
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    return {
      id,
      custom_id: customId,
      response: {
        status_code: error.status,
        request_id: id,
        body: {
          error: { message: error.message, type: error.type ?? "api_error", param: null, code: error.code ?? null },
        },
      },
      error: null,
    };
  }
}

/** Object names under `prefix` (all pages). */
async function* listObjects(ctx: NativeBatchContext, bucket: string, prefix: string): AsyncGenerator<string> {
  let pageToken: string | undefined;
  do {
    const query = new URLSearchParams({ prefix, fields: "items(name),nextPageToken" });
    if (pageToken) query.set("pageToken", pageToken);
    const url = `${storageBase(ctx)}/storage/v1/b/${encodeURIComponent(bucket)}/o?${query}`;
    const page = await callProviderJson({ url, method: "GET", headers: await authHeaders(ctx) }, ctx);
    for (const item of Array.isArray(page?.items) ? page.items : []) {
      if (typeof item?.name === "string" && item.name.startsWith(prefix)) yield item.name;
    }
    pageToken = typeof page?.nextPageToken === "string" && page.nextPageToken ? page.nextPageToken : undefined;
  } while (pageToken);
}

export const vertexBatches: NativeBatchApi = {
  supports(target, endpoint) {
    return target.provider === "vertex-ai" && endpoint === "/v1/chat/completions" && bucketOf(target) !== undefined;
  },

  async submit(submission, ctx) {
    const bucket = bucketOf(ctx.target);
    if (!bucket) {
      throw new UpstreamError(400, "Vertex AI batches need a Cloud Storage bucket (x-gateway-vertex-storage-bucket).", {
        param: "x-gateway-vertex-storage-bucket",
      });
    }
    const folder = `gateway-batches/${submission.batchId}`;
    const details: VertexDetails = {
      endpoint: submission.endpoint,
      model: "",
      bucket,
      outputPrefix: `${folder}/output`,
      total: 0,
    };
    const refusedLines = await planLines(submission.lines(), details);
    if (details.total === 0) {
      throw new UpstreamError(400, "No line of the batch can be sent to Vertex AI.", { code: "unsupported_lines" });
    }
    const inputObject = `${folder}/input.jsonl`;
    const uploadUrl = `${storageBase(ctx)}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o?${new URLSearchParams({
      uploadType: "media",
      name: inputObject,
    })}`;
    await callProviderJson(
      {
        url: uploadUrl,
        method: "POST",
        headers: { ...(await authHeaders(ctx)), "content-type": "application/jsonl" },
        body: inputLines(submission.lines(), details.model, refusedLines),
      },
      ctx,
    );
    const job = await callProviderJson(
      jsonBody("POST", jobsUrl(ctx), await authHeaders(ctx), {
        displayName: submission.batchId,
        model: `publishers/google/models/${details.model}`,
        inputConfig: { instancesFormat: "jsonl", gcsSource: { uris: [`gs://${bucket}/${inputObject}`] } },
        outputConfig: {
          predictionsFormat: "jsonl",
          gcsDestination: { outputUriPrefix: `gs://${bucket}/${details.outputPrefix}` },
        },
      }),
      ctx,
    );
    const providerBatchId = typeof job?.name === "string" ? job.name.split("/").pop() : undefined;
    if (!providerBatchId || !JOB_ID.test(providerBatchId)) {
      throw new UpstreamError(502, "Vertex AI answered a batch prediction job without a name.", {
        type: "server_error",
      });
    }
    return { providerBatchId, state: stateOf(job, details) };
  },

  async poll(providerBatchId, previous, ctx) {
    const job = await callProviderJson(
      { url: jobsUrl(ctx, jobPath(providerBatchId)), method: "GET", headers: await authHeaders(ctx) },
      ctx,
    );
    return stateOf(job, detailsOf(previous));
  },

  async *results(providerBatchId, state, ctx) {
    const details = detailsOf(state);
    yield* refusedResults(providerBatchId, details.refused);
    const bucket = encodeURIComponent(details.bucket);
    for await (const name of listObjects(ctx, details.bucket, `${details.outputPrefix}/`)) {
      if (!name.endsWith(".jsonl")) continue;
      const url = `${storageBase(ctx)}/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}?alt=media`;
      for await (const item of providerJsonLines({ url, method: "GET", headers: await authHeaders(ctx) }, ctx)) {
        const line = resultLine(providerBatchId, item, details, ctx);
        if (line) yield line;
      }
    }
  },

  async cancel(providerBatchId, _state, ctx) {
    await callProviderJson(
      jsonBody("POST", jobsUrl(ctx, `${jobPath(providerBatchId)}:cancel`), await authHeaders(ctx), {}),
      ctx,
    );
  },
};
