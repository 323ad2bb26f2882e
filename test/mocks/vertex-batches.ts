import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";
import { GEMINI_MOCK_USAGE } from "./google.ts";

/**
 * A mock of Vertex AI batch prediction and the Cloud Storage JSON API on one server, over real HTTP:
 *   POST /token                                               OAuth JWT-bearer grant -> {access_token, expires_in}
 *   POST /upload/storage/v1/b/{bucket}/o?uploadType=media&name={object}   stores the body -> an Object resource
 *   GET  /storage/v1/b/{bucket}/o?prefix=...&pageToken=...                 {kind, items: [{name, ...}], nextPageToken}
 *   GET  /storage/v1/b/{bucket}/o/{object}?alt=media                       the object's bytes
 *   POST /v1/projects/{p}/locations/{r}/batchPredictionJobs                a BatchPredictionJob, JOB_STATE_PENDING
 *   GET  /v1/projects/{p}/locations/{r}/batchPredictionJobs/{id}           each poll advances the job; after
 *        `pollsToEnd` polls it runs: reads its gcsSource input, writes
 *        `{outputUriPrefix}/prediction-model-{ts}/predictions.jsonl` (lines in reverse order: Vertex does not promise
 *        the input's) and answers JOB_STATE_SUCCEEDED with completionStats and outputInfo.gcsOutputDirectory
 *   POST /v1/projects/{p}/locations/{r}/batchPredictionJobs/{id}:cancel    JOB_STATE_CANCELLING, then CANCELLED
 *   POST /v1/projects/{p}/locations/{r}/tuningJobs                         a TuningJob, JOB_STATE_PENDING; its
 *        trainingDatasetUri (and validationDatasetUri) must name uploaded objects whose lines are `{contents}`
 *   GET  /v1/projects/{p}/locations/{r}/tuningJobs/{id}                    PENDING -> RUNNING -> after `pollsToEnd`
 *        polls SUCCEEDED with tunedModel {model, endpoint} and endTime (or FAILED with an error when `failJob`)
 *   POST /v1/projects/{p}/locations/{r}/tuningJobs/{id}:cancel             {} ; the job is CANCELLED on its next GET
 * Every call but /token needs `Authorization: Bearer <accessToken>`. Input lines must be `{"request": {contents}}`;
 * each output line echoes the request with `status: ""` and a GenerateContentResponse answering "You said: <text>",
 * or, for a request whose last user text contains "please fail", a `status` error message and no response.
 * Listing pages hold `pageSize` items (default 1000).
 */
interface MockTuningJob {
  name: string;
  body: any;
  polls: number;
  state: string;
  createTime: string;
  endTime?: string;
}

export interface VertexBatchesMockOptions {
  accessToken?: string;
  pollsToEnd?: number;
  pageSize?: number;
  /** The job fails (JOB_STATE_FAILED with an error) instead of running. */
  failJob?: boolean;
}

interface MockJob {
  name: string;
  body: any;
  polls: number;
  state: string;
  outputDirectory?: string;
  counts?: { successfulCount: string; failedCount: string; incompleteCount: string };
  createTime: string;
}

interface MockTuningJob {
  name: string;
  body: any;
  polls: number;
  state: string;
  createTime: string;
  endTime?: string;
}

export interface VertexBatchesMock extends MockServer {
  accessToken: string;
  tokenUri: string;
  jobs: Map<string, MockJob>;
  tuningJobs: Map<string, MockTuningJob>;
  /** Stored objects by `bucket/name`. */
  objects: Map<string, Buffer>;
  options: VertexBatchesMockOptions;
}

function googleError(res: ServerResponse, code: number, status: string, message: string): void {
  sendJson(res, code, { error: { code, message, status } });
}

function lastUserText(request: any): string {
  const contents = Array.isArray(request?.contents) ? request.contents : [];
  const last = [...contents].reverse().find((content: any) => content?.role === "user");
  return (last?.parts ?? []).map((part: any) => part?.text ?? "").join("");
}

/** `gs://bucket/object` -> [bucket, object]. */
function splitGcsUri(uri: string): [string, string] {
  const match = /^gs:\/\/([^/]+)\/(.*)$/.exec(uri);
  if (!match) throw new Error(`not a gs:// URI: ${uri}`);
  return [match[1]!, match[2]!];
}

export async function startVertexBatchesMock(options: VertexBatchesMockOptions = {}): Promise<VertexBatchesMock> {
  const accessToken = options.accessToken ?? "ya29.mock-vertex-batches";
  const jobs = new Map<string, MockJob>();
  const tuningJobs = new Map<string, MockTuningJob>();
  const objects = new Map<string, Buffer>();
  let nextJob = 1000;

  const view = (job: MockJob) => ({
    name: job.name,
    displayName: job.body.displayName,
    model: job.body.model,
    inputConfig: job.body.inputConfig,
    outputConfig: job.body.outputConfig,
    state: job.state,
    createTime: job.createTime,
    ...(job.counts ? { completionStats: job.counts } : {}),
    ...(job.outputDirectory ? { outputInfo: { gcsOutputDirectory: job.outputDirectory } } : {}),
    ...(job.state === "JOB_STATE_FAILED"
      ? { error: { code: 3, message: "Mock: the batch job failed to read its input." } }
      : {}),
  });

  /** Runs the job: every input line answered in the output directory. */
  const run = (job: MockJob) => {
    const [bucket, object] = splitGcsUri(job.body.inputConfig.gcsSource.uris[0]);
    const input = objects.get(`${bucket}/${object}`)?.toString("utf8") ?? "";
    const [outBucket, outPrefix] = splitGcsUri(job.body.outputConfig.gcsDestination.outputUriPrefix);
    const directory = `${outPrefix}/prediction-model-2025-01-01T00:00:00.000000Z`;
    let succeeded = 0;
    let failed = 0;
    const lines = input
      .split("\n")
      .filter(Boolean)
      .map((text) => {
        const { request } = JSON.parse(text);
        const said = lastUserText(request);
        if (said.includes("please fail")) {
          failed++;
          return { status: "Bad Request: Mock refused this request.", processed_time: "2025-01-01T00:00:01Z", request };
        }
        succeeded++;
        return {
          status: "",
          processed_time: "2025-01-01T00:00:01Z",
          request,
          response: {
            candidates: [
              { content: { role: "model", parts: [{ text: `You said: ${said}` }] }, finishReason: "STOP", index: 0 },
            ],
            usageMetadata: GEMINI_MOCK_USAGE,
            modelVersion: job.body.model.split("/").pop(),
            responseId: `resp-${job.name.split("/").pop()}-${succeeded}`,
          },
        };
      })
      .reverse();
    objects.set(
      `${outBucket}/${directory}/predictions.jsonl`,
      Buffer.from(lines.map((line) => JSON.stringify(line)).join("\n") + "\n"),
    );
    // Vertex also leaves other objects next to the predictions; they are not results.
    objects.set(`${outBucket}/${directory}/_SUCCESS`, Buffer.from(""));
    job.outputDirectory = `gs://${outBucket}/${directory}`;
    job.counts = { successfulCount: String(succeeded), failedCount: String(failed), incompleteCount: "0" };
    job.state = "JOB_STATE_SUCCEEDED";
  };

  const server = await startMockServer(async (request: RecordedRequest, res) => {
    const url = new URL(request.path, "http://mock");
    const path = url.pathname;
    if (path === "/token" && request.method === "POST") {
      const form = new URLSearchParams(request.body.toString("utf8"));
      if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer" || !form.get("assertion")) {
        return sendJson(res, 400, { error: "invalid_grant", error_description: "Invalid grant" });
      }
      return sendJson(res, 200, { access_token: accessToken, expires_in: 3599, token_type: "Bearer" });
    }
    if (request.headers.authorization !== `Bearer ${accessToken}`) {
      return googleError(res, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.");
    }

    const upload = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(path);
    if (upload && request.method === "POST") {
      const name = url.searchParams.get("name");
      if (url.searchParams.get("uploadType") !== "media" || !name) {
        return googleError(res, 400, "INVALID_ARGUMENT", "uploadType=media and name are required");
      }
      const bucket = decodeURIComponent(upload[1]!);
      objects.set(`${bucket}/${name}`, request.body);
      return sendJson(res, 200, {
        kind: "storage#object",
        id: `${bucket}/${name}/1`,
        name,
        bucket,
        size: String(request.body.length),
        contentType: request.headers["content-type"],
      });
    }
    const list = /^\/storage\/v1\/b\/([^/]+)\/o$/.exec(path);
    if (list && request.method === "GET") {
      const bucket = decodeURIComponent(list[1]!);
      const prefix = url.searchParams.get("prefix") ?? "";
      const names = [...objects.keys()]
        .filter((key) => key.startsWith(`${bucket}/`))
        .map((key) => key.slice(bucket.length + 1))
        .filter((name) => name.startsWith(prefix))
        .sort();
      const start = Number(url.searchParams.get("pageToken") ?? "0");
      const size = options.pageSize ?? 1000;
      const page = names.slice(start, start + size);
      return sendJson(res, 200, {
        kind: "storage#objects",
        items: page.map((name) => ({ kind: "storage#object", name, bucket })),
        ...(start + size < names.length ? { nextPageToken: String(start + size) } : {}),
      });
    }
    const download = /^\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/.exec(path);
    if (download && request.method === "GET") {
      if (url.searchParams.get("alt") !== "media") return googleError(res, 400, "INVALID_ARGUMENT", "alt=media only");
      const key = `${decodeURIComponent(download[1]!)}/${decodeURIComponent(download[2]!)}`;
      const body = objects.get(key);
      if (!body) return googleError(res, 404, "NOT_FOUND", `No such object: ${key}`);
      res.writeHead(200, { "content-type": "application/octet-stream" });
      return void res.end(body);
    }

    const tuningPath = /^\/v1\/(projects\/[^/]+\/locations\/[^/]+)\/tuningJobs(?:\/(\d+))?(:cancel)?$/.exec(path);
    if (tuningPath) return tuningRoute(request, res, tuningPath[1]!, tuningPath[2], Boolean(tuningPath[3]));

    const jobsPath = /^\/v1\/(projects\/[^/]+\/locations\/[^/]+)\/batchPredictionJobs(?:\/(\d+))?(:cancel)?$/.exec(
      path,
    );
    if (!jobsPath) return googleError(res, 404, "NOT_FOUND", `No mock route for ${request.method} ${path}`);
    const [, parent, id, cancel] = jobsPath;
    if (!id && request.method === "POST") {
      const body = request.json();
      const uri = body?.inputConfig?.gcsSource?.uris?.[0];
      if (
        typeof body?.displayName !== "string" ||
        !/^publishers\/google\/models\/[\w.@-]+$/.test(body?.model ?? "") ||
        body?.inputConfig?.instancesFormat !== "jsonl" ||
        typeof uri !== "string" ||
        body?.outputConfig?.predictionsFormat !== "jsonl" ||
        typeof body?.outputConfig?.gcsDestination?.outputUriPrefix !== "string"
      ) {
        return googleError(res, 400, "INVALID_ARGUMENT", "Invalid BatchPredictionJob");
      }
      const [bucket, object] = splitGcsUri(uri);
      if (!objects.has(`${bucket}/${object}`)) return googleError(res, 400, "FAILED_PRECONDITION", `${uri} not found`);
      const job: MockJob = {
        name: `${parent}/batchPredictionJobs/${nextJob++}`,
        body,
        polls: 0,
        state: "JOB_STATE_PENDING",
        createTime: new Date().toISOString(),
      };
      jobs.set(job.name.split("/").pop()!, job);
      return sendJson(res, 200, view(job));
    }
    const job = id ? jobs.get(id) : undefined;
    if (!job) return googleError(res, 404, "NOT_FOUND", "Job not found");
    if (cancel && request.method === "POST") {
      if (!["JOB_STATE_PENDING", "JOB_STATE_QUEUED", "JOB_STATE_RUNNING"].includes(job.state)) {
        return googleError(res, 400, "FAILED_PRECONDITION", `Cannot cancel a job in ${job.state}`);
      }
      job.state = "JOB_STATE_CANCELLING";
      return sendJson(res, 200, {});
    }
    if (!cancel && request.method === "GET") {
      job.polls++;
      if (job.state === "JOB_STATE_CANCELLING") job.state = "JOB_STATE_CANCELLED";
      else if (job.state === "JOB_STATE_PENDING" || job.state === "JOB_STATE_RUNNING") {
        if (job.polls >= (mock.options.pollsToEnd ?? 1)) {
          if (mock.options.failJob) job.state = "JOB_STATE_FAILED";
          else run(job);
        } else job.state = "JOB_STATE_RUNNING";
      }
      return sendJson(res, 200, view(job));
    }
    return googleError(res, 405, "INVALID_ARGUMENT", "Method not allowed");
  });

  /** Whether every line of the object is a Gemini tuning example (`contents` with a model turn). */
  const isTuningDataset = (uri: unknown): boolean => {
    if (typeof uri !== "string" || !uri.startsWith("gs://")) return false;
    const [bucket, object] = splitGcsUri(uri);
    const text = objects.get(`${bucket}/${object}`)?.toString("utf8");
    if (!text) return false;
    return text
      .split("\n")
      .filter(Boolean)
      .every((line) => {
        const example = JSON.parse(line);
        return Array.isArray(example.contents) && example.contents.some((content: any) => content.role === "model");
      });
  };

  const tuningView = (job: MockTuningJob) => ({
    name: job.name,
    tunedModelDisplayName: job.body.tunedModelDisplayName,
    baseModel: job.body.baseModel,
    supervisedTuningSpec: job.body.supervisedTuningSpec,
    state: job.state,
    createTime: job.createTime,
    ...(job.endTime ? { endTime: job.endTime } : {}),
    ...(job.state === "JOB_STATE_SUCCEEDED"
      ? {
          tunedModel: {
            model: `${job.name.replace(/\/tuningJobs\/.*/, "")}/models/77${job.name.split("/").pop()}@1`,
            endpoint: `${job.name.replace(/\/tuningJobs\/.*/, "")}/endpoints/88${job.name.split("/").pop()}`,
          },
          tuningDataStats: { supervisedTuningDataStats: { totalBillableTokenCount: "1234" } },
        }
      : {}),
    ...(job.state === "JOB_STATE_FAILED"
      ? { error: { code: 3, message: "Mock: the tuning dataset is invalid." } }
      : {}),
  });

  const tuningRoute = (
    request: RecordedRequest,
    res: ServerResponse,
    parent: string,
    id: string | undefined,
    cancel: boolean,
  ) => {
    if (!id && request.method === "POST") {
      const body = request.json();
      const spec = body?.supervisedTuningSpec;
      if (!/^gemini-[\w.@-]+$/.test(body?.baseModel ?? "") || !isTuningDataset(spec?.trainingDatasetUri)) {
        return googleError(res, 400, "INVALID_ARGUMENT", "Invalid TuningJob: baseModel or trainingDatasetUri");
      }
      if (spec.validationDatasetUri !== undefined && !isTuningDataset(spec.validationDatasetUri)) {
        return googleError(res, 400, "INVALID_ARGUMENT", "Invalid validationDatasetUri");
      }
      const job: MockTuningJob = {
        name: `${parent}/tuningJobs/${nextJob++}`,
        body,
        polls: 0,
        state: "JOB_STATE_PENDING",
        createTime: new Date().toISOString(),
      };
      tuningJobs.set(job.name.split("/").pop()!, job);
      return sendJson(res, 200, tuningView(job));
    }
    const job = id ? tuningJobs.get(id) : undefined;
    if (!job) return googleError(res, 404, "NOT_FOUND", "Tuning job not found");
    if (cancel && request.method === "POST") {
      if (!["JOB_STATE_PENDING", "JOB_STATE_RUNNING"].includes(job.state)) {
        return googleError(res, 400, "FAILED_PRECONDITION", `Cannot cancel a job in ${job.state}`);
      }
      job.state = "JOB_STATE_CANCELLING";
      return sendJson(res, 200, {});
    }
    if (!cancel && request.method === "GET") {
      job.polls++;
      if (job.state === "JOB_STATE_CANCELLING") {
        job.state = "JOB_STATE_CANCELLED";
        job.endTime = new Date().toISOString();
      } else if (job.state === "JOB_STATE_PENDING" || job.state === "JOB_STATE_RUNNING") {
        if (job.polls >= (mock.options.pollsToEnd ?? 1)) {
          job.state = mock.options.failJob ? "JOB_STATE_FAILED" : "JOB_STATE_SUCCEEDED";
          job.endTime = new Date().toISOString();
        } else job.state = "JOB_STATE_RUNNING";
      }
      return sendJson(res, 200, tuningView(job));
    }
    return googleError(res, 405, "INVALID_ARGUMENT", "Method not allowed");
  };

  const mock: VertexBatchesMock = Object.assign(server, {
    accessToken,
    tokenUri: `${server.url}/token`,
    jobs,
    tuningJobs,
    objects,
    options,
  });
  return mock;
}
