import type { ServerResponse } from "node:http";
import { answerResponses } from "./openai-responses.ts";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";
import { sampleFor } from "./sample-json.ts";

/**
 * A mock OpenAI-compatible upstream: /chat/completions (JSON and SSE), /completions, /embeddings, /moderations
 * and /models, matched by path suffix so any base path works (`/v1/chat/completions`, Azure's
 * `/openai/deployments/x/chat/completions?api-version=…`). Answers are deterministic and built from the request;
 * every request is recorded. Point the gateway at it with `x-gateway-custom-host: <mock.url>` (plus `/v1` or any
 * prefix you like).
 */

/** A failure the mock plays instead of (or in the middle of) a normal answer. */
export interface MockFault {
  /** Answer with this status and `body` (default: an OpenAI-style error object). */
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Answer 200 with a body that is not JSON. */
  malformedJson?: boolean;
  /** Streams only: send this many events, then fail. */
  streamFailAfter?: number;
  /** How a stream fails: cut the connection (default) or send an error event. */
  streamFailure?: "disconnect" | "error-event";
  /** Wait this long before answering (timeouts, cancellation). */
  delayMs?: number;
  /** Apply to this many requests, then heal (default: until cleared). */
  times?: number;
  /** Only requests whose path (without query) ends with this. */
  path?: string;
}

/** Holds the current fault and decides whether a request gets it. */
export class FaultSwitch {
  private fault: MockFault | undefined;
  private remaining = Number.POSITIVE_INFINITY;

  set(fault?: MockFault): void {
    this.fault = fault;
    this.remaining = fault?.times ?? Number.POSITIVE_INFINITY;
  }

  take(path: string): MockFault | undefined {
    const fault = this.fault;
    if (!fault || this.remaining <= 0) return undefined;
    if (fault.path && !pathOf(path).endsWith(fault.path)) return undefined;
    this.remaining -= 1;
    return fault;
  }
}

export function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

export function queryOf(url: string): URLSearchParams {
  return new URL(url, "http://mock").searchParams;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Plays the non-stream part of a fault. Returns true when the response was answered (error status, malformed
 * body); the caller stops there. Delays are awaited here.
 */
export async function playFault(
  fault: MockFault | undefined,
  res: ServerResponse,
  errorBody: (status: number) => unknown,
): Promise<boolean> {
  if (!fault) return false;
  if (fault.delayMs) await sleep(fault.delayMs);
  if (fault.status) {
    sendJson(res, fault.status, fault.body ?? errorBody(fault.status), fault.headers);
    return true;
  }
  if (fault.malformedJson) {
    res.writeHead(200, { "content-type": "application/json", ...fault.headers });
    res.end('{"id": "broken", "choices": [');
    return true;
  }
  return false;
}

export interface SseEvent {
  event?: string;
  data: unknown;
}

/** Writes SSE events one by one (optional pause between them), playing a mid-stream fault if asked. */
export async function streamEvents(
  res: ServerResponse,
  events: SseEvent[],
  options: { delayMs?: number; fault?: MockFault; errorEvent?: SseEvent } = {},
): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  const failAt = options.fault?.streamFailAfter;
  for (let i = 0; i < events.length; i++) {
    if (failAt !== undefined && i >= failAt) {
      if (options.fault?.streamFailure === "error-event" && options.errorEvent) {
        writeEvent(res, options.errorEvent);
        res.end();
      } else {
        // Let the events already written reach the client, then cut the connection without ending the body.
        await sleep(20);
        res.destroy();
      }
      return;
    }
    writeEvent(res, events[i]);
    if (options.delayMs) await sleep(options.delayMs);
  }
  res.end();
}

function writeEvent(res: ServerResponse, { event, data }: SseEvent): void {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  res.write(`${event ? `event: ${event}\n` : ""}data: ${payload}\n\n`);
}

/** A deterministic unit-ish vector for a text. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  let seed = 0;
  for (const char of text) seed = (seed * 31 + char.charCodeAt(0)) % 1_000_003;
  return Array.from(
    { length: dimensions },
    (_, i) => Math.round(((((seed + i * 7919) % 2000) - 1000) / 1000) * 1e4) / 1e4,
  );
}

export function float32Base64(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString("base64");
}

/** Rough token count used by the mocks' usage numbers: whitespace-separated words. */
export function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

export function openAIError(status: number, message?: string): object {
  const type =
    status === 401
      ? "authentication_error"
      : status === 429
        ? "rate_limit_error"
        : status >= 500
          ? "server_error"
          : "invalid_request_error";
  return { error: { message: message ?? `mock upstream answered ${status}`, type, param: null, code: String(status) } };
}

export interface OpenAIMockOptions {
  /** The assistant's answer (default "Hello from the mock upstream."). Streams send one word per chunk. */
  reply?: string;
  /** Pause between stream chunks, to prove the gateway does not buffer. */
  chunkDelayMs?: number;
  /**
   * When the request offers tools (and tool_choice is not "none", and the last message is no tool result unless a
   * call is required), call the first (or the named) tool. Default true.
   */
  toolCalls?: boolean;
  /** Arguments of that tool call (default: a value fitting the tool's parameters). */
  toolArguments?: Record<string, unknown>;
  /** Embedding size when the request does not say `dimensions` (default 8). */
  embeddingDimensions?: number;
  /** Ids listed by /models. */
  models?: string[];
  /** Azure flavour: content filter annotations in answers and a first stream chunk without choices. */
  azure?: boolean;
  /** Every Responses API answer with this id (see ResponsesMockOptions.responseId). */
  responseId?: string;
  /** Runs first: return an answer to send instead of the normal one (auth checks, path checks). */
  guard?: (request: RecordedRequest) => { status: number; body: unknown } | undefined;
}

export interface OpenAIMock extends MockServer {
  options: OpenAIMockOptions;
  setFault(fault?: MockFault): void;
  /** Forgets recorded requests and the fault. */
  reset(): void;
  lastRequest(): RecordedRequest | undefined;
}

export async function startOpenAIMock(options: OpenAIMockOptions = {}): Promise<OpenAIMock> {
  const faults = new FaultSwitch();
  const mock = (await startMockServer(async (request, res) => {
    const blocked = mock.options.guard?.(request);
    if (blocked) return sendJson(res, blocked.status, blocked.body);
    const fault = faults.take(request.path);
    if (await playFault(fault, res, (status) => openAIError(status))) return;
    await answer(request, res, mock.options, fault);
  })) as OpenAIMock;
  mock.options = options;
  mock.setFault = (fault) => faults.set(fault);
  mock.reset = () => {
    mock.requests.length = 0;
    faults.set(undefined);
  };
  mock.lastRequest = () => mock.requests.at(-1);
  return mock;
}

const CREATED = 1_700_000_000;
const AZURE_FILTER = {
  hate: { filtered: false, severity: "safe" },
  self_harm: { filtered: false, severity: "safe" },
  sexual: { filtered: false, severity: "safe" },
  violence: { filtered: false, severity: "safe" },
};

async function answer(
  request: RecordedRequest,
  res: ServerResponse,
  options: OpenAIMockOptions,
  fault: MockFault | undefined,
): Promise<void> {
  const path = pathOf(request.path);
  if (request.method === "GET" && path.endsWith("/models")) {
    const ids = options.models ?? ["mock-model", "mock-embedding"];
    return sendJson(res, 200, {
      object: "list",
      data: ids.map((id) => ({ id, object: "model", created: CREATED, owned_by: "mock" })),
    });
  }
  if (request.method !== "POST") return sendJson(res, 405, openAIError(405, `${request.method} not allowed`));
  let body: any;
  try {
    body = request.json();
  } catch {
    return sendJson(res, 400, openAIError(400, "body is not JSON"));
  }
  if (path.endsWith("/chat/completions")) return chat(body, res, options, fault);
  if (path.endsWith("/completions")) return completion(body, res, options, fault);
  if (path.endsWith("/embeddings")) return embeddings(body, res, options);
  if (path.endsWith("/moderations")) return moderations(body, res);
  if (path.endsWith("/responses"))
    return answerResponses(body, res, {
      reply: options.reply,
      toolArguments: options.toolArguments,
      account: String(request.headers.authorization ?? ""),
      responseId: options.responseId,
    });
  return sendJson(res, 404, openAIError(404, `no route ${path}`));
}

function usageOf(prompt: unknown, completion: string) {
  const promptTokens = Math.max(1, countTokens(typeof prompt === "string" ? prompt : JSON.stringify(prompt ?? "")));
  const completionTokens = countTokens(completion);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

function toolCallFor(
  body: any,
  options: OpenAIMockOptions,
): { id: string; type: "function"; function: { name: string; arguments: string } } | undefined {
  if (options.toolCalls === false || !Array.isArray(body.tools) || body.tools.length === 0) return undefined;
  if (body.tool_choice === "none") return undefined;
  // A model answers in text once the tools it called have answered (unless it is told to call one).
  const forced = body.tool_choice === "required" || typeof body.tool_choice === "object";
  if (!forced && body.messages?.at(-1)?.role === "tool") return undefined;
  const named = typeof body.tool_choice === "object" ? body.tool_choice?.function?.name : undefined;
  const tool = body.tools.find((t: any) => !named || t.function?.name === named) ?? body.tools[0];
  return {
    id: "call_mock_1",
    type: "function",
    function: {
      name: tool.function?.name ?? "tool",
      arguments: JSON.stringify(options.toolArguments ?? sampleFor(tool.function?.parameters) ?? {}),
    },
  };
}

function logprobsOf(words: string[]) {
  return {
    content: words.map((token) => ({
      token,
      logprob: -0.25,
      bytes: [...Buffer.from(token)],
      top_logprobs: [],
    })),
    refusal: null,
  };
}

/**
 * The answer's text: the configured reply, but for structured output one that is JSON (a reply the test set as
 * JSON is kept, any other becomes JSON fitting the asked schema).
 */
function replyFor(body: any, options: OpenAIMockOptions): string {
  const format = body.response_format;
  if (format?.type === "json_schema") {
    return isJson(options.reply) ? options.reply! : JSON.stringify(sampleFor(format.json_schema?.schema));
  }
  if (format?.type === "json_object")
    return isJson(options.reply) ? options.reply! : JSON.stringify({ answer: options.reply ?? "Hello" });
  return options.reply ?? "Hello from the mock upstream.";
}

function isJson(text: string | undefined): boolean {
  if (text === undefined) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

async function chat(body: any, res: ServerResponse, options: OpenAIMockOptions, fault: MockFault | undefined) {
  const model = body.model ?? "mock-model";
  const reply = replyFor(body, options);
  const call = toolCallFor(body, options);
  const words = call ? [] : reply.split(/(?<= )/);
  const usage = usageOf(body.messages, call ? call.function.arguments : reply);
  const id = "chatcmpl-mock";
  const finish = call ? "tool_calls" : "stop";

  if (!body.stream) {
    const message: Record<string, unknown> = { role: "assistant", content: call ? null : reply, refusal: null };
    if (call) message.tool_calls = [call];
    const choice = (index: number): Record<string, unknown> => ({
      index,
      message,
      logprobs: body.logprobs ? logprobsOf(words) : null,
      finish_reason: finish,
      ...(options.azure && { content_filter_results: AZURE_FILTER }),
    });
    return sendJson(res, 200, {
      id,
      object: "chat.completion",
      created: CREATED,
      model,
      system_fingerprint: "fp_mock",
      choices: Array.from({ length: Math.max(1, Number(body.n) || 1) }, (_, index) => choice(index)),
      usage,
      ...(options.azure && { prompt_filter_results: [{ prompt_index: 0, content_filter_results: AZURE_FILTER }] }),
    });
  }

  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created: CREATED,
    model,
    system_fingerprint: "fp_mock",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const events: SseEvent[] = [];
  if (options.azure) {
    events.push({
      data: {
        id: "",
        object: "",
        created: 0,
        model: "",
        choices: [],
        prompt_filter_results: [{ prompt_index: 0, content_filter_results: AZURE_FILTER }],
      },
    });
  }
  events.push({ data: chunk({ role: "assistant", content: "", refusal: null }) });
  if (call) {
    events.push({
      data: chunk({
        tool_calls: [
          { index: 0, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } },
        ],
      }),
    });
    events.push({ data: chunk({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] }) });
  }
  for (const word of words) events.push({ data: chunk({ content: word }) });
  events.push({ data: chunk({}, finish) });
  if (body.stream_options?.include_usage) {
    events.push({
      data: {
        id,
        object: "chat.completion.chunk",
        created: CREATED,
        model,
        system_fingerprint: "fp_mock",
        choices: [],
        usage,
      },
    });
  }
  events.push({ data: "[DONE]" });
  await streamEvents(res, events, {
    delayMs: options.chunkDelayMs,
    fault,
    errorEvent: {
      data: { error: { message: "mock upstream failed mid-stream", type: "server_error", code: "stream_error" } },
    },
  });
}

async function completion(body: any, res: ServerResponse, options: OpenAIMockOptions, fault: MockFault | undefined) {
  const model = body.model ?? "mock-model";
  const reply = options.reply ?? "Hello from the mock upstream.";
  const usage = usageOf(body.prompt, reply);
  const id = "cmpl-mock";
  if (!body.stream) {
    return sendJson(res, 200, {
      id,
      object: "text_completion",
      created: CREATED,
      model,
      system_fingerprint: "fp_mock",
      choices: [{ text: reply, index: 0, logprobs: null, finish_reason: "stop" }],
      usage,
    });
  }
  const chunk = (text: string, finishReason: string | null) => ({
    id,
    object: "text_completion",
    created: CREATED,
    model,
    system_fingerprint: "fp_mock",
    choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason }],
  });
  const events: SseEvent[] = reply.split(/(?<= )/).map((word) => ({ data: chunk(word, null) }));
  events.push({ data: chunk("", "stop") });
  if (body.stream_options?.include_usage) {
    events.push({ data: { id, object: "text_completion", created: CREATED, model, choices: [], usage } });
  }
  events.push({ data: "[DONE]" });
  await streamEvents(res, events, {
    delayMs: options.chunkDelayMs,
    fault,
    errorEvent: { data: { error: { message: "mock upstream failed mid-stream", type: "server_error" } } },
  });
}

function embeddings(body: any, res: ServerResponse, options: OpenAIMockOptions) {
  const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
  if (inputs.length === 0 || inputs.some((input) => input === undefined)) {
    return sendJson(res, 400, openAIError(400, "input is required"));
  }
  const dimensions = Number(body.dimensions) || options.embeddingDimensions || 8;
  const texts = inputs.map((input) => (typeof input === "string" ? input : JSON.stringify(input)));
  const tokens = texts.reduce((sum, text) => sum + Math.max(1, countTokens(text)), 0);
  return sendJson(res, 200, {
    object: "list",
    data: texts.map((text, index) => {
      const vector = fakeEmbedding(text, dimensions);
      return {
        object: "embedding",
        index,
        embedding: body.encoding_format === "base64" ? float32Base64(vector) : vector,
      };
    }),
    model: body.model ?? "mock-embedding",
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

/** The categories of OpenAI's moderation object (omni-moderation models), as its API reference lists them. */
const MODERATION_CATEGORIES = [
  "harassment",
  "harassment/threatening",
  "hate",
  "hate/threatening",
  "illicit",
  "illicit/violent",
  "self-harm",
  "self-harm/intent",
  "self-harm/instructions",
  "sexual",
  "sexual/minors",
  "violence",
  "violence/graphic",
] as const;

/** The categories OpenAI moderates images for (the rest read text only), per its moderation guide. */
const IMAGE_CATEGORIES = new Set([
  "self-harm",
  "self-harm/intent",
  "self-harm/instructions",
  "sexual",
  "violence",
  "violence/graphic",
]);

/** Words the mock treats as violent: an input holding one is flagged for `violence`, any other is not. */
const VIOLENT = /\b(hurt|kill|attack)\b/i;

/**
 * POST /moderations: one result per input (each string of a list, or one for a list of multimodal parts), scored
 * from its text; `model` defaults to omni-moderation-latest as OpenAI's does.
 */
function moderations(body: any, res: ServerResponse) {
  const input = body.input;
  const multimodal = Array.isArray(input) && input.some((item) => typeof item === "object");
  const inputs: unknown[] = multimodal ? [input] : Array.isArray(input) ? input : [input];
  if (inputs.length === 0 || inputs.some((entry) => entry === undefined || entry === null)) {
    return sendJson(res, 400, openAIError(400, "input is required"));
  }
  const results = inputs.map((entry) => {
    const parts: any[] = Array.isArray(entry) ? entry : [{ type: "text", text: String(entry) }];
    const text = parts.map((part) => part?.text ?? "").join(" ");
    const withImage = parts.some((part) => part?.type === "image_url");
    const violent = VIOLENT.test(text);
    const scoreOf = (category: string) => (violent && category === "violence" ? 0.86 : 0.0001);
    const each = <T>(value: (category: string) => T) =>
      Object.fromEntries(MODERATION_CATEGORIES.map((category) => [category, value(category)]));
    return {
      flagged: violent,
      categories: each((category) => scoreOf(category) > 0.5),
      category_scores: each(scoreOf),
      category_applied_input_types: each((category) =>
        withImage && IMAGE_CATEGORIES.has(category) ? ["text", "image"] : ["text"],
      ),
    };
  });
  return sendJson(res, 200, { id: "modr-mock", model: body.model ?? "omni-moderation-latest", results });
}
