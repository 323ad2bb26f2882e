import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * A mock of Bedrock batch inference over real HTTP: the Bedrock control plane and, path-style on the same server,
 * the S3 bucket the jobs read and write (the gateway reaches both at a target's custom host).
 *   PUT/GET /{bucket}/{key}                       S3 objects (SigV4 service `s3`, `x-amz-content-sha256` required)
 *   POST /model-invocation-job                    CreateModelInvocationJob: checks the documented body, reads the
 *                                                 input object (JSONL `{recordId, modelInput}`) -> {jobArn}
 *   GET  /model-invocation-job/{jobArn}           GetModelInvocationJob: Submitted, InProgress, ..., then Completed
 *                                                 after `pollsToEnd` polls, writing `{output}/{jobId}/{input}.out`
 *                                                 and `manifest.json.out`
 *   POST /model-invocation-job/{jobArn}/stop      StopModelInvocationJob: Stopping, the next poll Stopped (no output)
 * Control-plane calls must be signed for service `bedrock`. Each record's modelInput must be a Claude Messages
 * body for InvokeModel (anthropic_version bedrock-2023-05-31, max_tokens, messages, no model or stream); it is
 * answered with a message echoing the last user text, or with a record error when that text is "fail".
 */
export interface BedrockBatchesMockOptions {
  pollsToEnd?: number;
  /** Bedrock's minimum number of records per job (a job with fewer fails validation). */
  minRecords?: number;
}

interface MockJob {
  jobArn: string;
  jobId: string;
  body: any;
  token?: string;
  polls: number;
  status: string;
  message?: string;
}

export interface BedrockBatchesMock extends MockServer {
  objects: Map<string, Buffer>;
  jobs: Map<string, MockJob>;
  options: BedrockBatchesMockOptions;
}

const RECORD_ID = /^[a-zA-Z0-9]{1,64}$/;
const JOB_NAME = /^[a-zA-Z0-9](-*[a-zA-Z0-9+.-]){0,62}$/;

function awsError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { message }, { "x-amzn-errortype": type });
}

function s3Error(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { "content-type": "application/xml" });
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}

function signedFor(request: RecordedRequest, service: string): boolean {
  const auth = String(request.headers.authorization ?? "");
  return (
    new RegExp(`^AWS4-HMAC-SHA256 Credential=[^/]+/\\d{8}/[a-z0-9-]+/${service}/aws4_request, SignedHeaders=`).test(
      auth,
    ) && Boolean(request.headers["x-amz-date"])
  );
}

function lastUserText(input: any): string {
  const messages = Array.isArray(input?.messages) ? input.messages : [];
  const last = [...messages].reverse().find((message: any) => message?.role === "user");
  if (typeof last?.content === "string") return last.content;
  const block = Array.isArray(last?.content) ? last.content.find((item: any) => item?.type === "text") : undefined;
  return block?.text ?? "";
}

const fromS3Uri = (uri: string) => /^s3:\/\/([^/]+)\/(.*)$/.exec(uri);

export async function startBedrockBatchesMock(options: BedrockBatchesMockOptions = {}): Promise<BedrockBatchesMock> {
  const objects = new Map<string, Buffer>();
  const jobs = new Map<string, MockJob>();
  let next = 0;

  const records = (job: MockJob) => {
    const [, bucket, key] = fromS3Uri(job.body.inputDataConfig.s3InputDataConfig.s3Uri)!;
    return objects
      .get(`${bucket}/${key}`)!
      .toString("utf8")
      .split("\n")
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line));
  };

  const complete = (job: MockJob) => {
    const inputUri = job.body.inputDataConfig.s3InputDataConfig.s3Uri as string;
    const [, bucket, prefix] = fromS3Uri(job.body.outputDataConfig.s3OutputDataConfig.s3Uri)!;
    const name = inputUri.slice(inputUri.lastIndexOf("/") + 1);
    const base = `${bucket}/${prefix.replace(/\/?$/, "/")}${job.jobId}/`;
    let success = 0;
    let failed = 0;
    const lines = records(job).map((record, index) => {
      const text = lastUserText(record.modelInput);
      if (text === "fail") {
        failed++;
        return {
          recordId: record.recordId,
          modelInput: record.modelInput,
          error: { errorCode: 400, errorMessage: "bad request" },
        };
      }
      success++;
      const answer = `You said: ${text}`;
      return {
        recordId: record.recordId,
        modelInput: record.modelInput,
        modelOutput: {
          id: `msg_bdrk_${job.jobId}_${index}`,
          type: "message",
          role: "assistant",
          model: "claude-3-haiku-20240307",
          content: [{ type: "text", text: answer }],
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: answer.split(/\s+/).length },
        },
      };
    });
    objects.set(`${base}${name}.out`, Buffer.from(lines.map((line) => JSON.stringify(line)).join("\n") + "\n"));
    objects.set(
      `${base}manifest.json.out`,
      Buffer.from(
        JSON.stringify({
          totalRecordCount: lines.length,
          processedRecordCount: lines.length,
          successRecordCount: success,
          errorRecordCount: failed,
          inputTokenCount: 12 * lines.length,
          outputTokenCount: 3 * success,
        }),
      ),
    );
    job.status = "Completed";
  };

  const createJob = (request: RecordedRequest, res: ServerResponse) => {
    let body: any;
    try {
      body = request.json();
    } catch {
      return awsError(res, 400, "ValidationException", "body is not JSON");
    }
    const input = body?.inputDataConfig?.s3InputDataConfig;
    const output = body?.outputDataConfig?.s3OutputDataConfig;
    if (
      typeof body?.jobName !== "string" ||
      !JOB_NAME.test(body.jobName) ||
      typeof body.roleArn !== "string" ||
      !body.roleArn.startsWith("arn:aws:iam::") ||
      typeof body.modelId !== "string" ||
      typeof input?.s3Uri !== "string" ||
      (input.s3InputFormat !== undefined && input.s3InputFormat !== "JSONL") ||
      typeof output?.s3Uri !== "string" ||
      !fromS3Uri(input.s3Uri) ||
      !fromS3Uri(output.s3Uri)
    ) {
      return awsError(res, 400, "ValidationException", "invalid CreateModelInvocationJob request");
    }
    if (body.clientRequestToken) {
      const same = [...jobs.values()].find((job) => job.token === body.clientRequestToken);
      if (same) return sendJson(res, 200, { jobArn: same.jobArn });
    }
    const [, bucket, key] = fromS3Uri(input.s3Uri)!;
    if (!objects.has(`${bucket}/${key}`) || !key!.endsWith(".jsonl")) {
      return awsError(res, 400, "ValidationException", "input data not found");
    }
    const jobId = `mockjob${String(++next).padStart(5, "0")}`;
    const job: MockJob = {
      jobArn: `arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/${jobId}`,
      jobId,
      body,
      token: body.clientRequestToken,
      polls: 0,
      status: "Submitted",
    };
    const lines = records(job);
    const problem = lines.find(
      (line) =>
        typeof line.recordId !== "string" ||
        !RECORD_ID.test(line.recordId) ||
        line.modelInput?.anthropic_version !== "bedrock-2023-05-31" ||
        typeof line.modelInput.max_tokens !== "number" ||
        !Array.isArray(line.modelInput.messages) ||
        "model" in line.modelInput ||
        "stream" in line.modelInput,
    );
    if (problem || lines.length < (mock.options.minRecords ?? 1)) {
      job.status = "Failed";
      job.message = problem ? `invalid record ${JSON.stringify(problem.recordId)}` : "too few records";
    }
    jobs.set(job.jobArn, job);
    return sendJson(res, 200, { jobArn: job.jobArn });
  };

  const route = async (request: RecordedRequest, res: ServerResponse) => {
    const path = request.path.split("?")[0]!;
    if (path.startsWith("/model-invocation-job")) {
      if (!signedFor(request, "bedrock")) return awsError(res, 403, "AccessDeniedException", "missing signature");
      if (request.method === "POST" && path === "/model-invocation-job") return createJob(request, res);
      const match = /^\/model-invocation-job\/([^/]+)(\/stop)?$/.exec(path);
      const job = match ? jobs.get(decodeURIComponent(match[1]!)) : undefined;
      if (!job) return awsError(res, 404, "ResourceNotFoundException", "job not found");
      if (request.method === "GET" && !match![2]) {
        job.polls++;
        if (job.status === "Stopping") job.status = "Stopped";
        else if (!["Failed", "Stopped", "Completed"].includes(job.status)) {
          if (job.polls >= (mock.options.pollsToEnd ?? 2)) complete(job);
          else job.status = "InProgress";
        }
        return sendJson(res, 200, {
          jobArn: job.jobArn,
          jobName: job.body.jobName,
          modelId: job.body.modelId,
          roleArn: job.body.roleArn,
          status: job.status,
          ...(job.message ? { message: job.message } : {}),
          inputDataConfig: job.body.inputDataConfig,
          outputDataConfig: job.body.outputDataConfig,
          submitTime: new Date().toISOString(),
        });
      }
      if (request.method === "POST" && match![2]) {
        if (!["Completed", "Failed", "Stopped"].includes(job.status)) job.status = "Stopping";
        return sendJson(res, 200, {});
      }
      return awsError(res, 404, "UnknownOperationException", "unknown operation");
    }
    // S3, path-style.
    if (!signedFor(request, "s3") || !request.headers["x-amz-content-sha256"]) {
      return s3Error(res, 403, "AccessDenied", "missing signature or x-amz-content-sha256");
    }
    const key = path
      .slice(1)
      .split("/")
      .map((part) => decodeURIComponent(part))
      .join("/");
    if (request.method === "PUT") {
      if (Number(request.headers["content-length"]) !== request.body.length) {
        return s3Error(res, 400, "IncompleteBody", "content-length does not match the body");
      }
      objects.set(key, request.body);
      res.writeHead(200, { etag: '"mock"' });
      res.end();
      return;
    }
    if (request.method === "GET") {
      const object = objects.get(key);
      if (!object) return s3Error(res, 404, "NoSuchKey", "The specified key does not exist.");
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(object);
      return;
    }
    return s3Error(res, 405, "MethodNotAllowed", "method not allowed");
  };

  const server = await startMockServer(route);
  const mock: BedrockBatchesMock = Object.assign(server, { objects, jobs, options });
  return mock;
}
