import type { ServerResponse } from "node:http";
import { encodeBedrockEvent } from "../mocks/bedrock.ts";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "./mock-server.ts";

/**
 * Upstreams whose streams break mid-answer, in the shapes of four providers, for the tests of stream
 * continuation (a fallback with `on_stream_failure: "continue"`). The path picks the shape and the behaviour, so
 * one server plays every target of a config (`custom_host: host("anthropic", "cut")`):
 *
 *   shapes   openai     POST .../chat/completions (chunks) and .../responses (Responses events)
 *            anthropic  POST .../v1/messages (Messages events)
 *            gemini     POST .../v1beta/models/{model}:streamGenerateContent?alt=sse
 *            bedrock    POST .../model/{modelId}/converse-stream (AWS binary event stream)
 *   faults   cut        the first words of ANSWER ("The quick bro"), then the connection is destroyed
 *            stall      the same words, then silence (the gateway's idle timeout ends it)
 *            error      the same words, then the provider's own in-stream error (an error chunk, `event: error`,
 *                       Gemini's error object, a Bedrock exception message)
 *            malformed  the same words, then an event whose JSON is cut off, and the end
 *            tool       half a tool call, then the connection is destroyed
 *            ok         a whole answer
 *            slow       (OpenAI shape) a whole answer, a word every 200 ms: a client may leave in the middle
 *
 * An `ok` upstream answers as a model asked to continue would: when the conversation ends with an assistant turn
 * (a prefill; a trailing model turn for Gemini), with the rest of ANSWER after that text; when it ends with an
 * instruction after the assistant's partial answer, from the start of the partial answer's last word (models
 * restart the word they were in, which the gateway must trim); otherwise with the whole of ANSWER.
 */

export const ANSWER = "The quick brown fox jumps over the lazy dog.";
/** What a broken stream sends before its fault. */
export const BROKEN_PIECES = ["The ", "quick ", "bro"];
/** Tokens each leg reports (a continuation's completion tokens are its pieces). */
export const PROMPT_TOKENS = 20;

export type Shape = "openai" | "anthropic" | "gemini" | "bedrock";
export type Fault = "cut" | "stall" | "error" | "malformed" | "tool" | "ok" | "slow";

export interface BrokenStreams extends MockServer {
  /** The custom host of a shape and behaviour (what a config target's `custom_host` is set to). */
  host(shape: Shape, fault: Fault): string;
  /** The requests one shape and behaviour got, parsed. */
  bodies(shape: Shape, fault: Fault): any[];
}

export async function startBrokenStreams(): Promise<BrokenStreams> {
  const server = await startMockServer(async (request, res) => {
    const [, shape, fault] = request.path.split("?")[0]!.split("/") as [string, Shape, Fault];
    const body = request.json();
    const whole = fault === "ok" || fault === "slow";
    const pieces = whole ? words(answerFor(shape, body)) : BROKEN_PIECES;
    const writer = WRITERS[shape];
    if (!writer) return sendJson(res, 404, { error: { message: `no shape ${shape}` } });
    const responses = /\/responses$/.test(request.path);
    await writer(res, { pieces, fault, model: String(body.model ?? modelOf(request)), responses });
  });
  return Object.assign(server, {
    host: (shape: Shape, fault: Fault) => `${server.url}/${shape}/${fault}${shape === "openai" ? "/v1" : ""}`,
    bodies: (shape: Shape, fault: Fault) =>
      server.requests.filter((entry) => entry.path.startsWith(`/${shape}/${fault}/`)).map((entry) => entry.json()),
  });
}

function modelOf(request: RecordedRequest): string {
  return decodeURIComponent(/\/models?\/([^/:]+)/.exec(request.path)?.[1] ?? "model");
}

/** ANSWER in pieces a word long (each keeping its trailing space). */
function words(text: string): string[] {
  return text.split(/(?<= )/).filter(Boolean);
}

/** What an `ok` upstream answers to this request (see above). */
function answerFor(shape: Shape, body: any): string {
  const turns = turnsOf(shape, body);
  const last = turns.at(-1);
  if (last?.role === "assistant") return ANSWER.startsWith(last.text) ? ANSWER.slice(last.text.length) : ANSWER;
  const before = turns.at(-2);
  if (before?.role === "assistant" && ANSWER.startsWith(before.text))
    return ANSWER.slice(before.text.lastIndexOf(" ") + 1);
  return ANSWER;
}

/** The conversation's turns as role and text, in each shape's request format. */
function turnsOf(shape: Shape, body: any): Array<{ role: string; text: string }> {
  const textOf = (content: unknown): string =>
    typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content.map((part: any) => part?.text ?? "").join("")
        : "";
  if (shape === "gemini")
    return (body.contents ?? []).map((turn: any) => ({
      role: turn.role === "model" ? "assistant" : turn.role,
      text: textOf(turn.parts),
    }));
  return (body.messages ?? []).map((turn: any) => ({ role: turn.role, text: textOf(turn.content) }));
}

interface Plan {
  pieces: string[];
  fault: Fault;
  model: string;
  /** OpenAI's Responses API rather than chat completions. */
  responses: boolean;
}

const pause = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

/** Ends a broken stream its way; an `ok` one is ended by its writer. */
async function breakStream(res: ServerResponse, fault: Fault, errorEvent: () => void, malformed: string) {
  await pause(20);
  if (fault === "cut" || fault === "tool") return void res.socket?.destroy();
  if (fault === "stall") return; // silence: the gateway gives up (the server closes the socket at the end)
  if (fault === "error") errorEvent();
  else res.write(malformed);
  res.end();
}

const sse = (res: ServerResponse, data: unknown, event?: string) =>
  res.write(`${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);

type Writer = (res: ServerResponse, plan: Plan) => Promise<void>;

const WRITERS: Record<Shape, Writer> = {
  async openai(res, plan) {
    if (plan.responses) return openaiResponses(res, plan);
    res.writeHead(200, { "content-type": "text/event-stream" });
    const head = { id: "chatcmpl-broken", object: "chat.completion.chunk", created: 1_700_000_000, model: plan.model };
    const chunk = (delta: object, finish: string | null = null) =>
      sse(res, { ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    chunk({ role: "assistant", content: "" });
    if (plan.fault === "tool") {
      chunk({
        tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "lookup", arguments: "" } }],
      });
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] });
    } else
      for (const piece of plan.pieces) {
        chunk({ content: piece });
        if (plan.fault === "slow") await pause(200);
        if (res.destroyed) return;
      }
    if (plan.fault !== "ok" && plan.fault !== "slow")
      return breakStream(
        res,
        plan.fault,
        () => sse(res, { error: { message: "The server had an error.", type: "server_error", code: "server_error" } }),
        `data: {"id":"chatcmpl-broken","choices":[{"index":0,"delta":{"content":"x"\n\n`,
      );
    chunk({}, "stop");
    const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: plan.pieces.length, total_tokens: 0 };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    sse(res, { ...head, choices: [], usage });
    sse(res, "[DONE]");
    res.end();
  },

  async anthropic(res, plan) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const message = {
      id: "msg_broken",
      type: "message",
      role: "assistant",
      model: plan.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: PROMPT_TOKENS, output_tokens: 1 },
    };
    sse(res, { type: "message_start", message }, "message_start");
    if (plan.fault === "tool") {
      const block = { type: "tool_use", id: "toolu_1", name: "lookup", input: {} };
      sse(res, { type: "content_block_start", index: 0, content_block: block }, "content_block_start");
      sse(
        res,
        { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"q":' } },
        "content_block_delta",
      );
    } else {
      sse(
        res,
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        "content_block_start",
      );
      for (const text of plan.pieces)
        sse(res, { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, "content_block_delta");
    }
    if (plan.fault !== "ok")
      return breakStream(
        res,
        plan.fault,
        () => sse(res, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "error"),
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_d\n\n',
      );
    sse(res, { type: "content_block_stop", index: 0 }, "content_block_stop");
    const delta = { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null } };
    sse(res, { ...delta, usage: { output_tokens: plan.pieces.length } }, "message_delta");
    sse(res, { type: "message_stop" }, "message_stop");
    res.end();
  },

  async gemini(res, plan) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const event = (parts: object[], extra: object = {}) =>
      sse(res, {
        candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
        usageMetadata: { promptTokenCount: PROMPT_TOKENS },
        modelVersion: plan.model,
        responseId: "gemini-broken",
      });
    if (plan.fault === "tool") {
      // Gemini sends a function call whole: a stream cut inside one is cut before it.
      event([{ text: "" }]);
    } else for (const text of plan.pieces) event([{ text }]);
    if (plan.fault !== "ok")
      return breakStream(
        res,
        plan.fault,
        () => sse(res, { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } }),
        'data: {"candidates":[{"content":{"role":"model","parts":[{"te\n\n',
      );
    sse(res, {
      candidates: [{ content: { role: "model", parts: [{ text: "" }] }, index: 0, finishReason: "STOP" }],
      usageMetadata: {
        promptTokenCount: PROMPT_TOKENS,
        candidatesTokenCount: plan.pieces.length,
        totalTokenCount: PROMPT_TOKENS + plan.pieces.length,
      },
      modelVersion: plan.model,
      responseId: "gemini-broken",
    });
    res.end();
  },

  async bedrock(res, plan) {
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "broken" });
    const frame = (event: string, payload: unknown, messageType: "event" | "exception" = "event") =>
      res.write(encodeBedrockEvent({ event, payload, messageType }));
    frame("messageStart", { role: "assistant" });
    if (plan.fault === "tool") {
      frame("contentBlockStart", {
        contentBlockIndex: 0,
        start: { toolUse: { toolUseId: "tooluse_1", name: "lookup" } },
      });
      frame("contentBlockDelta", { contentBlockIndex: 0, delta: { toolUse: { input: '{"q":' } } });
    } else for (const text of plan.pieces) frame("contentBlockDelta", { contentBlockIndex: 0, delta: { text } });
    if (plan.fault !== "ok")
      return breakStream(
        res,
        plan.fault,
        () => frame("modelStreamErrorException", { message: "The model stream failed." }, "exception"),
        Buffer.from(encodeBedrockEvent({ event: "contentBlockDelta", payload: { x: 1 } }))
          .subarray(0, 20)
          .toString("latin1"),
      );
    frame("contentBlockStop", { contentBlockIndex: 0 });
    frame("messageStop", { stopReason: "end_turn" });
    const usage = { inputTokens: PROMPT_TOKENS, outputTokens: plan.pieces.length };
    frame("metadata", {
      usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens },
      metrics: { latencyMs: 5 },
    });
    res.end();
  },
};

/** OpenAI's Responses events for a message answer (only ever the broken first leg: a continuation speaks chat). */
async function openaiResponses(res: ServerResponse, plan: Plan): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  let sequence = 0;
  const event = (type: string, fields: object) => sse(res, { type, ...fields, sequence_number: sequence++ }, type);
  const response = {
    id: "resp_broken",
    object: "response",
    created_at: 1_700_000_000,
    status: "in_progress",
    model: plan.model,
    output: [],
    usage: null,
  };
  event("response.created", { response });
  event("response.in_progress", { response });
  const item = { id: "msg_broken", type: "message", status: "in_progress", role: "assistant", content: [] };
  event("response.output_item.added", { output_index: 0, item });
  const where = { item_id: item.id, output_index: 0, content_index: 0 };
  event("response.content_part.added", { ...where, part: { type: "output_text", text: "", annotations: [] } });
  for (const delta of plan.pieces) event("response.output_text.delta", { ...where, delta, logprobs: [] });
  return breakStream(
    res,
    plan.fault,
    () => event("error", { code: "server_error", message: "The server had an error.", param: null }),
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","de\n\n',
  );
}
