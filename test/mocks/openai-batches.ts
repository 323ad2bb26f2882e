import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";
import { type MockProviderFile, type OpenAIFilesMock, startOpenAIFilesMock } from "./openai-files.ts";

/**
 * A small OpenAI platform over real HTTP, written from OpenAI's API reference: the Files API (test/mocks/openai-
 * files.ts, reached through this server) and the Batch API with a state machine that "runs" a batch by answering
 * each line of its uploaded input file:
 *   POST /v1/batches {input_file_id, endpoint, completion_window: "24h", metadata}  -> `validating`
 *   GET  /v1/batches/{id}   each poll advances: validating -> in_progress -> ... -> completed after `pollsToComplete`
 *                           polls, writing the output file (200 lines) and the error file (lines whose model is
 *                           `error-model` answer 400); an invalid input file fails the batch with `errors.data[]`
 *   POST /v1/batches/{id}/cancel  -> `cancelling`, then `cancelled` on the next poll
 * Azure OpenAI flavour (`azure: true`): the same under `/openai/batches?api-version=...` and `/openai/v1/batches`
 * with the `api-key` header; the create call takes `endpoint: "/chat/completions"`, dated API versions take lines
 * with `url: "/chat/completions"` (v1: `/v1/chat/completions`), every line must name one deployment (`deployments`
 * when set), and the create answer has Azure's capitalised status and ISO timestamps.
 * Extra routes (fine-tuning: test/mocks/openai-fine-tuning.ts) plug in with `extraRoutes`.
 */
export interface OpenAIBatchesMockOptions {
  apiKey: string;
  azure?: boolean;
  deployments?: string[];
  pollsToComplete?: number;
  /** Handles a request first; returns true when it answered. */
  extraRoutes?: Array<
    (request: RecordedRequest, res: ServerResponse, mock: OpenAIBatchesMock) => Promise<boolean> | boolean
  >;
}

export interface MockBatch {
  id: string;
  object: "batch";
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: string;
  created_at: number;
  errors: {
    object: "list";
    data: Array<{ code: string; message: string; param: string | null; line: number | null }>;
  } | null;
  output_file_id: string | null;
  error_file_id: string | null;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
  polls: number;
}

export interface OpenAIBatchesMock extends MockServer {
  files: OpenAIFilesMock;
  batches: Map<string, MockBatch>;
  options: OpenAIBatchesMockOptions;
  /** Text content of a provider file (input, output or error). */
  fileText(id: string): string;
}

const OPENAI_ENDPOINTS = new Set(["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses"]);
const now = () => Math.floor(Date.now() / 1000);

function error(
  res: ServerResponse,
  status: number,
  message: string,
  param: string | null = null,
  code: string | null = null,
) {
  sendJson(res, status, { error: { message, type: "invalid_request_error", param, code } });
}

function lastUserText(body: any): string {
  if (typeof body?.input === "string") return body.input;
  if (typeof body?.prompt === "string") return body.prompt;
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const last = [...messages].reverse().find((message: any) => message?.role === "user");
  return typeof last?.content === "string" ? last.content : "";
}

const words = (text: string) => Math.max(1, text.split(/\s+/).filter(Boolean).length);

/** The answer a line gets, by endpoint (OpenAI's response bodies, abridged). */
function answerOf(endpoint: string, body: any, index: number): unknown {
  const model = body.model ?? "mock-model";
  const question = lastUserText(body);
  const text = `Batch answer to: ${question}`;
  const usage = {
    prompt_tokens: words(question),
    completion_tokens: words(text),
    total_tokens: words(question) + words(text),
  };
  if (endpoint.endsWith("/embeddings")) {
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    return {
      object: "list",
      data: inputs.map((_: unknown, i: number) => ({ object: "embedding", index: i, embedding: [0.1, 0.2, 0.3] })),
      model,
      usage: { prompt_tokens: usage.prompt_tokens, total_tokens: usage.prompt_tokens },
    };
  }
  if (endpoint.endsWith("/responses")) {
    return {
      id: `resp_batch_${index}`,
      object: "response",
      created_at: now(),
      status: "completed",
      model,
      output: [
        {
          type: "message",
          id: `msg_batch_${index}`,
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text, annotations: [] }],
        },
      ],
      usage: {
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
      },
    };
  }
  if (endpoint.endsWith("/chat/completions")) {
    return {
      id: `chatcmpl-batch-${index}`,
      object: "chat.completion",
      created: now(),
      model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: text, refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage,
    };
  }
  return {
    id: `cmpl-batch-${index}`,
    object: "text_completion",
    created: now(),
    model,
    choices: [{ text, index: 0, logprobs: null, finish_reason: "stop" }],
    usage,
  };
}

export async function startOpenAIBatchesMock(options: OpenAIBatchesMockOptions): Promise<OpenAIBatchesMock> {
  const files = await startOpenAIFilesMock({ apiKey: options.apiKey });
  const batches = new Map<string, MockBatch>();
  let serial = 0;

  const addFile = (purpose: string, filename: string, text: string) => addProviderFile(files, purpose, filename, text);

  /** Checks the input file's lines; answers the errors of 2.6 (code, message, param, line). */
  const validate = (batch: MockBatch, lines: string[], azureV1: boolean): MockBatch["errors"] => {
    const data: NonNullable<MockBatch["errors"]>["data"] = [];
    const seen = new Set<string>();
    const models = new Set<string>();
    const expectedUrl = options.azure ? (azureV1 ? `/v1${batch.endpoint}` : batch.endpoint) : batch.endpoint;
    lines.forEach((text, index) => {
      const line = index + 1;
      let item: any;
      try {
        item = JSON.parse(text);
      } catch {
        data.push({
          code: "invalid_json_line",
          message: "This line is not parseable as valid JSON.",
          param: null,
          line,
        });
        return;
      }
      if (typeof item?.custom_id !== "string" || seen.has(item.custom_id)) {
        data.push({
          code: "duplicate_custom_id",
          message: "custom_id must be a unique string.",
          param: "custom_id",
          line,
        });
      }
      seen.add(item?.custom_id);
      if (item?.method !== "POST")
        data.push({ code: "invalid_method", message: "method must be POST.", param: "method", line });
      if (item?.url !== expectedUrl) {
        data.push({ code: "mismatched_url", message: `url must be ${expectedUrl}.`, param: "url", line });
      }
      models.add(item?.body?.model);
    });
    if (options.azure) {
      const [model] = models;
      if (models.size > 1) {
        data.push({
          code: "model_mismatch",
          message: "Every line must name the same deployment.",
          param: "model",
          line: null,
        });
      } else if (options.deployments && !options.deployments.includes(model!)) {
        data.push({
          code: "model_not_found",
          message: `The deployment ${model} does not exist.`,
          param: "model",
          line: null,
        });
      }
    }
    return data.length ? { object: "list", data } : null;
  };

  const run = (batch: MockBatch) => {
    const input = files.files.get(batch.input_file_id)!.content.toString("utf8");
    const lines = input.split("\n").filter((line) => line.trim());
    const output: string[] = [];
    const failures: string[] = [];
    lines.forEach((text, index) => {
      const item = JSON.parse(text);
      const id = `batch_req_mock_${batch.id.slice(-6)}_${index}`;
      const request_id = `req_mock_${index}`;
      if (item.body?.model === "error-model") {
        const body = {
          error: {
            message: "The model `error-model` does not exist.",
            type: "invalid_request_error",
            param: "model",
            code: "model_not_found",
          },
        };
        failures.push(
          JSON.stringify({
            id,
            custom_id: item.custom_id,
            response: { status_code: 404, request_id, body },
            error: null,
          }),
        );
      } else {
        const body = answerOf(batch.endpoint, item.body, index);
        output.push(
          JSON.stringify({
            id,
            custom_id: item.custom_id,
            response: { status_code: 200, request_id, body },
            error: null,
          }),
        );
      }
    });
    batch.output_file_id = output.length
      ? addFile("batch_output", `${batch.id}_output.jsonl`, `${output.join("\n")}\n`)
      : null;
    batch.error_file_id = failures.length
      ? addFile("batch_output", `${batch.id}_error.jsonl`, `${failures.join("\n")}\n`)
      : null;
    batch.request_counts = { total: lines.length, completed: output.length, failed: failures.length };
  };

  const advance = (batch: MockBatch, azureV1: boolean) => {
    batch.polls++;
    const t = now();
    if (batch.status === "cancelling") {
      batch.status = "cancelled";
      batch.cancelled_at = t;
      return;
    }
    if (batch.status === "validating") {
      const input = files.files.get(batch.input_file_id)!.content.toString("utf8");
      const lines = input.split("\n").filter((line) => line.trim());
      batch.errors = validate(batch, lines, azureV1);
      if (batch.errors) {
        batch.status = "failed";
        batch.failed_at = t;
        return;
      }
      batch.status = "in_progress";
      batch.in_progress_at = t;
      batch.request_counts = { total: lines.length, completed: 0, failed: 0 };
    }
    if (batch.status === "in_progress" && batch.polls >= (mock.options.pollsToComplete ?? 2)) {
      batch.finalizing_at = t;
      run(batch);
      batch.status = "completed";
      batch.completed_at = t;
    }
  };

  const present = (batch: MockBatch, azureCreate = false): unknown => {
    const { polls: _polls, ...body } = batch;
    if (!azureCreate) return body;
    // Azure's create answer: capitalised status, ISO timestamps, counts not known yet.
    const iso = (value: number | null) => (value === null ? null : new Date(value * 1000).toISOString());
    return {
      ...body,
      status: body.status.charAt(0).toUpperCase() + body.status.slice(1),
      created_at: iso(body.created_at),
      expires_at: iso(body.expires_at),
      request_counts: { total: null, completed: null, failed: null },
    };
  };

  const route = async (request: RecordedRequest, res: ServerResponse) => {
    for (const extra of mock.options.extraRoutes ?? []) if (await extra(request, res, mock)) return;
    const url = new URL(request.path, "http://mock");
    if (/^\/(?:v1|openai|openai\/v1)\/files(\/|$)/.test(url.pathname)) return proxy(request, res, files.url);
    const match = /^\/(v1|openai|openai\/v1)\/batches(?:\/([^/]+))?(\/cancel)?\/?$/.exec(url.pathname);
    if (!match) return error(res, 404, `Invalid URL (${request.method} ${url.pathname})`);
    const azurePath = match[1] !== "v1";
    if (azurePath !== Boolean(mock.options.azure)) return error(res, 404, "Resource not found");
    const azureV1 = match[1] === "openai/v1";
    const key = azurePath ? request.headers["api-key"] : request.headers.authorization?.replace(/^Bearer /, "");
    if (key !== mock.options.apiKey)
      return sendJson(res, 401, {
        error: {
          message: "Incorrect API key provided.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      });
    if (azurePath && !azureV1 && !url.searchParams.get("api-version")) return error(res, 404, "Resource not found");
    const [, , id, cancel] = match;
    if (!id && request.method === "POST") {
      const body = request.json();
      const file = files.files.get(body?.input_file_id);
      if (!file)
        return error(res, 400, `Invalid 'input_file_id': file ${body?.input_file_id} not found.`, "input_file_id");
      if (file.purpose !== "batch")
        return error(res, 400, "The input file must have purpose 'batch'.", "input_file_id");
      const endpoints = mock.options.azure ? new Set(["/chat/completions", ...OPENAI_ENDPOINTS]) : OPENAI_ENDPOINTS;
      if (!endpoints.has(body.endpoint)) return error(res, 400, `Invalid 'endpoint': ${body.endpoint}.`, "endpoint");
      if (body.completion_window !== "24h")
        return error(res, 400, "Invalid 'completion_window': only 24h is supported.", "completion_window");
      if (body.metadata && Object.keys(body.metadata).length > 16)
        return error(res, 400, "Invalid 'metadata': at most 16 pairs.", "metadata");
      const created = now();
      const batch: MockBatch = {
        id: `batch_mock${String(++serial).padStart(6, "0")}`,
        object: "batch",
        // Azure runs `/chat/completions` however it was named; the mock keeps the OpenAI form of the endpoint.
        endpoint: mock.options.azure ? body.endpoint.replace(/^\/v1/, "") : body.endpoint,
        input_file_id: file.id,
        completion_window: "24h",
        status: "validating",
        created_at: created,
        errors: null,
        output_file_id: null,
        error_file_id: null,
        in_progress_at: null,
        expires_at: created + 86_400,
        finalizing_at: null,
        completed_at: null,
        failed_at: null,
        expired_at: null,
        cancelling_at: null,
        cancelled_at: null,
        request_counts: { total: 0, completed: 0, failed: 0 },
        metadata: body.metadata ?? null,
        polls: 0,
      };
      batches.set(batch.id, batch);
      return sendJson(res, 200, present(batch, Boolean(mock.options.azure)));
    }
    const batch = id ? batches.get(decodeURIComponent(id)) : undefined;
    if (!batch) return error(res, 404, `No batch found with id '${id}'.`, "batch_id");
    if (cancel && request.method === "POST") {
      if (batch.status !== "validating" && batch.status !== "in_progress") {
        return error(res, 400, `Cannot cancel a batch with status '${batch.status}'.`);
      }
      batch.status = "cancelling";
      batch.cancelling_at = now();
      return sendJson(res, 200, present(batch));
    }
    if (!cancel && request.method === "GET") {
      advance(batch, azureV1);
      return sendJson(res, 200, present(batch));
    }
    return error(res, 405, "Method not allowed");
  };

  const mock = (await startMockServer(route)) as OpenAIBatchesMock;
  mock.files = files;
  mock.batches = batches;
  mock.options = options;
  mock.fileText = (fileId) => files.files.get(fileId)?.content.toString("utf8") ?? "";
  const close = mock.close;
  mock.close = async () => {
    await close();
    await files.close();
  };
  return mock;
}

let fileSerial = 0;

/** Adds a file the provider made itself (batch output, fine-tuning results) to the Files mock; answers its id. */
export function addProviderFile(files: OpenAIFilesMock, purpose: string, filename: string, text: string): string {
  const content = Buffer.from(text);
  const id = `file-out${String(++fileSerial).padStart(6, "0")}`;
  const file: MockProviderFile = {
    id,
    object: "file",
    bytes: content.length,
    created_at: now(),
    filename,
    purpose,
    status: "processed",
    status_details: null,
    content,
    contentType: "application/octet-stream",
    sha256: createHash("sha256").update(content).digest("hex"),
  };
  files.files.set(id, file);
  return id;
}

/** The mock's key check: `Authorization: Bearer` on OpenAI paths, `api-key` on Azure's (`/openai/...`). */
export function keyOf(request: RecordedRequest, azurePath: boolean): string | undefined {
  return azurePath
    ? (request.headers["api-key"] as string | undefined)
    : request.headers.authorization?.replace(/^Bearer /, "");
}

/** Forwards a request to another mock as it came (the Files API lives in its own mock). */
async function proxy(request: RecordedRequest, res: ServerResponse, base: string): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string" && !HOP_HEADERS.has(name)) headers[name] = value;
  }
  const answer = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers,
    body: request.method === "GET" || request.method === "DELETE" ? undefined : new Uint8Array(request.body),
  });
  res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
  res.end(Buffer.from(await answer.arrayBuffer()));
}

const HOP_HEADERS = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive"]);
