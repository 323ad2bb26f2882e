import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import type { UpstreamEvent } from "../../core/providers/types.ts";
import { sampleFor } from "./sample-json.ts";
import {
  type MockRoute,
  type MockServer,
  type RecordedRequest,
  sendJson,
  startMockServer,
  writeSse,
} from "../helpers/mock-server.ts";

/**
 * A mock Anthropic Messages API for end-to-end tests, answering from the wire-format fixtures in
 * test/fixtures/anthropic. Point the gateway at it with `x-gateway-provider: anthropic` and
 * `x-gateway-custom-host: <mock.url>`.
 *
 *   POST /v1/messages  JSON message, or SSE events when `stream: true`
 *   POST /v1/messages/count_tokens  {input_tokens}
 *   GET  /v1/models    model list
 *
 * The answer is picked by scenario: `auto` (default) answers with tool_use when the request offers tools (not
 * `tool_choice: none`) and its last turn answers no tool (or a call is forced), calling the forced or first tool
 * with input that fits its schema; with thinking when thinking is enabled, else with text. The echoed `model` is
 * the requested one.
 */

const FIXTURES = fileURLToPath(new URL("../fixtures/anthropic/", import.meta.url));

export type AnthropicScenario = "auto" | "text" | "tool_use" | "thinking" | "cache" | "overloaded";

/** Parses SSE text into events: blocks split on blank lines, `event:` and `data:` fields (data lines joined by \n). */
export function parseSse(text: string): UpstreamEvent[] {
  const events: UpstreamEvent[] = [];
  for (const block of text.replace(/\r\n?/g, "\n").split(/\n\n+/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (data.length) events.push(event === undefined ? { data: data.join("\n") } : { event, data: data.join("\n") });
  }
  return events;
}

export function readAnthropicJson(name: string): any {
  return JSON.parse(readFileSync(`${FIXTURES}${name}`, "utf8"));
}

export function readAnthropicSse(name: string): UpstreamEvent[] {
  return parseSse(readFileSync(`${FIXTURES}${name}`, "utf8"));
}

const MESSAGE_FIXTURES: Record<Exclude<AnthropicScenario, "auto" | "overloaded">, { json: string; sse: string }> = {
  text: { json: "message-text.json", sse: "stream-text.sse" },
  tool_use: { json: "message-tool-use.json", sse: "stream-tool-use.sse" },
  thinking: { json: "message-thinking.json", sse: "stream-thinking.sse" },
  cache: { json: "message-cache-usage.json", sse: "stream-text.sse" },
};

/** `auto`: tool_use when tools are offered and the last turn answers none, thinking when enabled, else text. */
function pick(scenario: AnthropicScenario, body: any): Exclude<AnthropicScenario, "auto"> {
  if (scenario !== "auto") return scenario;
  const last = body?.messages?.at(-1);
  const answersTool = Array.isArray(last?.content) && last.content.some((block: any) => block?.type === "tool_result");
  const forced = body?.tool_choice?.type === "any" || body?.tool_choice?.type === "tool";
  const offered = Array.isArray(body?.tools) && body.tools.length && body?.tool_choice?.type !== "none";
  if (offered && (forced || !answersTool)) return "tool_use";
  if (body?.thinking?.type === "enabled") return "thinking";
  return "text";
}

/**
 * The Message and the stream events the mock answers `body` with (scenario `auto`: tool_use when tools are offered
 * and the last turn answers none, thinking when enabled, else text), the model echoed. Shared with the Bedrock
 * and Vertex AI mocks, whose Claude models answer Anthropic's Messages in Anthropic's own shapes.
 */
export function anthropicAnswerFor(
  body: any,
  scenario: AnthropicScenario = "auto",
): { message: any; events: UpstreamEvent[] } {
  const fixture = MESSAGE_FIXTURES[pick(scenario, body) as keyof typeof MESSAGE_FIXTURES];
  const message = { ...readAnthropicJson(fixture.json), model: body.model };
  // Structured output (`output_config.format`, or the beta's `output_format`): JSON that fits the schema.
  const format = body.output_config?.format ?? body.output_format;
  if (format?.type === "json_schema" && message.stop_reason !== "tool_use") {
    message.content = [{ type: "text", text: JSON.stringify(sampleFor(format.schema)) }];
    return { message, events: streamOf(message) };
  }
  const tool = calledTool(body);
  if (tool && message.stop_reason === "tool_use") {
    // The tool the request offered (or forced) is the one called, with input that fits its schema.
    message.content = message.content.map((block: any) =>
      block.type === "tool_use" ? { ...block, name: tool.name, input: tool.input } : block,
    );
    return { message, events: streamOf(message) };
  }
  const events = readAnthropicSse(fixture.sse).map((event) => {
    if (event.event !== "message_start") return event;
    const data = JSON.parse(event.data);
    return { event: event.event, data: JSON.stringify({ ...data, message: { ...data.message, model: body.model } }) };
  });
  return { message, events };
}

/** The tool an answer calls: the one tool_choice forces, else the first offered; its input a sample of its schema. */
function calledTool(body: any): { name: string; input: unknown } | undefined {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools.filter((tool: any) => tool?.input_schema) : [];
  if (!tools.length) return undefined;
  const forced = body.tool_choice?.type === "tool" ? body.tool_choice.name : undefined;
  const tool = tools.find((candidate) => candidate.name === forced) ?? tools[0];
  return { name: tool.name, input: sampleFor(tool.input_schema) };
}

/** The stream events Anthropic sends for a Message: each block started, filled by one delta, stopped. */
export function streamOf(message: any): UpstreamEvent[] {
  const event = (data: any): UpstreamEvent => ({ event: data.type, data: JSON.stringify(data) });
  const { content, stop_reason, stop_sequence, usage, ...rest } = message;
  const events = [
    event({ type: "message_start", message: { ...rest, content: [], stop_reason: null, stop_sequence: null, usage } }),
  ];
  content.forEach((block: any, index: number) => {
    if (block.type === "text") {
      events.push(event({ type: "content_block_start", index, content_block: { type: "text", text: "" } }));
      events.push(event({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }));
    } else {
      events.push(event({ type: "content_block_start", index, content_block: { ...block, input: {} } }));
      const partial = JSON.stringify(block.input);
      events.push(
        event({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } }),
      );
    }
    events.push(event({ type: "content_block_stop", index }));
  });
  events.push(
    event({
      type: "message_delta",
      delta: { stop_reason, stop_sequence },
      usage: { output_tokens: usage.output_tokens },
    }),
  );
  events.push(event({ type: "message_stop" }));
  return events;
}

function anthropicError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { type: "error", error: { type, message } }, { "request-id": "req_mock" });
}

async function answerMessages(
  request: RecordedRequest,
  res: ServerResponse,
  scenario: AnthropicScenario,
  delayMs: number,
) {
  if (!request.headers["x-api-key"]) return anthropicError(res, 401, "authentication_error", "invalid x-api-key");
  if (!request.headers["anthropic-version"]) {
    return anthropicError(res, 400, "invalid_request_error", "anthropic-version: header is required");
  }
  let body: any;
  try {
    body = request.json();
  } catch {
    return anthropicError(res, 400, "invalid_request_error", "request body is not valid JSON");
  }
  if (!body?.model || !Array.isArray(body.messages) || typeof body.max_tokens !== "number") {
    return anthropicError(res, 400, "invalid_request_error", "model, messages and max_tokens are required");
  }
  const chosen = pick(scenario, body);
  if (chosen === "overloaded") {
    if (!body.stream) return anthropicError(res, 529, "overloaded_error", "Overloaded");
    return writeSse(res, readAnthropicSse("stream-error.sse"), delayMs);
  }
  const { message, events } = anthropicAnswerFor(body, chosen);
  if (!body.stream) return sendJson(res, 200, message);
  return writeSse(res, events, delayMs);
}

export function anthropicRoute(options: { scenario?: () => AnthropicScenario; delayMs?: number } = {}): MockRoute {
  return async (request, res) => {
    const path = request.path.split("?")[0];
    if (request.method === "POST" && path === "/v1/messages") {
      return answerMessages(request, res, options.scenario?.() ?? "auto", options.delayMs ?? 0);
    }
    if (request.method === "POST" && path === "/v1/messages/count_tokens") {
      // Anthropic's token counting: the same body as a message without max_tokens; answers {input_tokens}.
      if (!request.headers["x-api-key"]) return anthropicError(res, 401, "authentication_error", "invalid x-api-key");
      const body = JSON.parse(request.body.toString() || "{}");
      if (!body.model || !Array.isArray(body.messages) || "max_tokens" in body || "stream" in body) {
        return anthropicError(res, 400, "invalid_request_error", "count_tokens takes model and messages only");
      }
      const chars = JSON.stringify(body.messages).length + JSON.stringify(body.system ?? "").length;
      return sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(chars / 4)) });
    }
    if (request.method === "GET" && path === "/v1/models") {
      if (!request.headers["x-api-key"]) return anthropicError(res, 401, "authentication_error", "invalid x-api-key");
      return sendJson(res, 200, readAnthropicJson("models-list.json"));
    }
    return anthropicError(res, 404, "not_found_error", `${request.method} ${path} not found`);
  };
}

export interface AnthropicMock extends MockServer {
  /** Fixes the answer for the next requests (`auto` restores the default choice). */
  setScenario(scenario: AnthropicScenario): void;
}

/** Starts the mock on 127.0.0.1. `delayMs` pauses between SSE events (to observe streaming). */
export async function startAnthropicMock(
  options: { scenario?: AnthropicScenario; delayMs?: number } = {},
): Promise<AnthropicMock> {
  let scenario = options.scenario ?? "auto";
  const server = await startMockServer(anthropicRoute({ scenario: () => scenario, delayMs: options.delayMs }));
  return Object.assign(server, {
    setScenario(next: AnthropicScenario) {
      scenario = next;
    },
  });
}
