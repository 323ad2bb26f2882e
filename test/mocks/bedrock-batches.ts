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
 * Model customisation (fine-tuning) jobs, on the same server:
 *   POST /model-customization-jobs                CreateModelCustomizationJob: checks the documented body (name
 *                                                 rules, FINE_TUNING, string hyperparameters), that the training
 *                                                 object exists -> {jobArn}; a dataset not in the base model's
 *                                                 format (Claude 3 Haiku or Nova) fails the job
 *   GET  /model-customization-jobs/{jobArn}       GetModelCustomizationJob: InProgress, then Completed (with
 *                                                 outputModelArn) after `pollsToEnd` polls
 *   POST /model-customization-jobs/{jobArn}/stop  StopModelCustomizationJob: Stopping, the next poll Stopped
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

interface MockCustomizationJob {
  jobArn: string;
  body: any;
  polls: number;
  status: string;
  failureMessage?: string;
  creationTime: string;
  endTime?: string;
  outputModelArn?: string;
}

export interface BedrockBatchesMock extends MockServer {
  objects: Map<string, Buffer>;
  jobs: Map<string, MockJob>;
  customizationJobs: Map<string, MockCustomizationJob>;
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

const CUSTOM_MODEL_NAME = /^([0-9a-zA-Z][_-]?){1,63}$/;

/** Whether a dataset line is in the base model's fine-tuning format (Bedrock's "Prepare data for fine-tuning"). */
function datasetLineProblem(line: any, base: string): string | undefined {
  const alternates = (messages: any[]) =>
    messages.length >= 2 &&
    messages.every((message, index) => message?.role === (index % 2 === 0 ? "user" : "assistant"));
  if (!Array.isArray(line?.messages) || !alternates(line.messages)) return "messages must alternate user, assistant";
  if (base.startsWith("anthropic.claude-3-haiku")) {
    if (line.system !== undefined && typeof line.system !== "string") return "system must be a string";
    if (!line.messages.every((message: any) => typeof message.content === "string")) return "content must be a string";
    return Object.keys(line).every((key) => key === "system" || key === "messages") ? undefined : "unknown field";
  }
  if (base.startsWith("amazon.nova-")) {
    if (line.schemaVersion !== "bedrock-conversation-2024") return "schemaVersion must be bedrock-conversation-2024";
    const texts = (value: any) =>
      Array.isArray(value) && value.length > 0 && value.every((item) => typeof item?.text === "string");
    if (line.system !== undefined && !texts(line.system)) return "system must be a list of {text}";
    return line.messages.every((message: any) => texts(message.content)) ? undefined : "content must be [{text}]";
  }
  return "base model cannot be customised";
}

export async function startBedrockBatchesMock(options: BedrockBatchesMockOptions = {}): Promise<BedrockBatchesMock> {
  const objects = new Map<string, Buffer>();
  const jobs = new Map<string, MockJob>();
  const customizationJobs = new Map<string, MockCustomizationJob>();
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

  const createCustomization = (request: RecordedRequest, res: ServerResponse) => {
    let body: any;
    try {
      body = request.json();
    } catch {
      return awsError(res, 400, "ValidationException", "body is not JSON");
    }
    const training = fromS3Uri(String(body?.trainingDataConfig?.s3Uri ?? ""));
    const validators = body?.validationDataConfig?.validators;
    if (
      typeof body?.jobName !== "string" ||
      !JOB_NAME.test(body.jobName) ||
      typeof body.customModelName !== "string" ||
      !CUSTOM_MODEL_NAME.test(body.customModelName) ||
      typeof body.roleArn !== "string" ||
      !body.roleArn.startsWith("arn:aws:iam::") ||
      typeof body.baseModelIdentifier !== "string" ||
      body.customizationType !== "FINE_TUNING" ||
      !training ||
      !fromS3Uri(String(body.outputDataConfig?.s3Uri ?? "")) ||
      (body.hyperParameters !== undefined &&
        !Object.values(body.hyperParameters).every((value) => typeof value === "string")) ||
      (body.validationDataConfig !== undefined &&
        (!Array.isArray(validators) || !validators.every((item: any) => fromS3Uri(String(item?.s3Uri ?? ""))))) ||
      (body.clientRequestToken !== undefined && !/^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,255}$/.test(body.clientRequestToken))
    ) {
      return awsError(res, 400, "ValidationException", "invalid CreateModelCustomizationJob request");
    }
    if (body.clientRequestToken) {
      const same = [...customizationJobs.values()].find(
        (job) => job.body.clientRequestToken === body.clientRequestToken,
      );
      if (same) return sendJson(res, 201, { jobArn: same.jobArn });
    }
    const datasets = [training, ...(validators ?? []).map((item: any) => fromS3Uri(item.s3Uri))];
    const missing = datasets.find((match) => !objects.has(`${match![1]}/${match![2]}`));
    if (missing) return awsError(res, 400, "ValidationException", `object ${missing[0]} not found`);
    const id = `mockft${String(++next).padStart(6, "0")}`;
    const job: MockCustomizationJob = {
      jobArn: `arn:aws:bedrock:us-east-1:123456789012:model-customization-job/${body.baseModelIdentifier}/${id}`,
      body,
      polls: 0,
      status: "InProgress",
      creationTime: new Date().toISOString(),
    };
    for (const match of datasets) {
      const lines = objects
        .get(`${match![1]}/${match![2]}`)!
        .toString("utf8")
        .split("\n")
        .filter((line) => line.trim());
      const problem = lines
        .map((line, index) => {
          const why = datasetLineProblem(JSON.parse(line), body.baseModelIdentifier);
          return why ? `${match![0]} line ${index + 1}: ${why}` : undefined;
        })
        .find(Boolean);
      if (problem && job.status !== "Failed") {
        job.status = "Failed";
        job.failureMessage = problem;
        job.endTime = new Date().toISOString();
      }
    }
    customizationJobs.set(job.jobArn, job);
    return sendJson(res, 201, { jobArn: job.jobArn });
  };

  const customization = (request: RecordedRequest, res: ServerResponse, path: string) => {
    if (request.method === "POST" && path === "/model-customization-jobs") return createCustomization(request, res);
    const match = /^\/model-customization-jobs\/([^/]+)(\/stop)?$/.exec(path);
    const job = match ? customizationJobs.get(decodeURIComponent(match[1]!)) : undefined;
    if (!job) return awsError(res, 404, "ResourceNotFoundException", "job not found");
    const finish = (status: string) => {
      job.status = status;
      job.endTime = new Date().toISOString();
    };
    if (request.method === "GET" && !match![2]) {
      job.polls++;
      if (job.status === "Stopping") finish("Stopped");
      else if (job.status === "InProgress" && job.polls >= (mock.options.pollsToEnd ?? 2)) {
        finish("Completed");
        job.outputModelArn = `arn:aws:bedrock:us-east-1:123456789012:custom-model/${job.body.baseModelIdentifier}/${job.jobArn.split("/").pop()}`;
      }
      return sendJson(res, 200, {
        jobArn: job.jobArn,
        jobName: job.body.jobName,
        outputModelName: job.body.customModelName,
        ...(job.outputModelArn ? { outputModelArn: job.outputModelArn } : {}),
        clientRequestToken: job.body.clientRequestToken,
        roleArn: job.body.roleArn,
        status: job.status,
        ...(job.failureMessage ? { failureMessage: job.failureMessage } : {}),
        creationTime: job.creationTime,
        lastModifiedTime: new Date().toISOString(),
        ...(job.endTime ? { endTime: job.endTime } : {}),
        baseModelArn: `arn:aws:bedrock:us-east-1::foundation-model/${job.body.baseModelIdentifier}`,
        hyperParameters: job.body.hyperParameters ?? {},
        trainingDataConfig: job.body.trainingDataConfig,
        ...(job.body.validationDataConfig ? { validationDataConfig: job.body.validationDataConfig } : {}),
        outputDataConfig: job.body.outputDataConfig,
        customizationType: "FINE_TUNING",
      });
    }
    if (request.method === "POST" && match![2]) {
      if (job.status !== "InProgress") {
        return awsError(res, 400, "ValidationException", `job is ${job.status}, it cannot be stopped`);
      }
      job.status = "Stopping";
      return sendJson(res, 200, {});
    }
    return awsError(res, 404, "UnknownOperationException", "unknown operation");
  };

  const route = async (request: RecordedRequest, res: ServerResponse) => {
    const path = request.path.split("?")[0]!;
    if (path.startsWith("/model-customization-jobs")) {
      if (!signedFor(request, "bedrock")) return awsError(res, 403, "AccessDeniedException", "missing signature");
      return customization(request, res, path);
    }
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
  const mock: BedrockBatchesMock = Object.assign(server, { objects, jobs, customizationJobs, options });
  return mock;
}
