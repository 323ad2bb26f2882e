import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { instanceOf } from "./schema-instance.ts";
import { fileURLToPath } from "node:url";
import type { UpstreamEvent } from "../../core/providers/types.ts";
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
 * The answer is picked by scenario: `auto` (default) answers with tool_use when the request has tools,
 * with thinking when thinking is enabled, else with text. The echoed `model` is the requested one.
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

function pick(scenario: AnthropicScenario, body: any): Exclude<AnthropicScenario, "auto"> {
  if (scenario !== "auto") return scenario;
  // tool_choice `none`: the model answers without calling a tool (Anthropic's tool use documentation).
  if (Array.isArray(body?.tools) && body.tools.length && body.tool_choice?.type !== "none") return "tool_use";
  if (body?.thinking?.type === "enabled") return "thinking";
  return "text";
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
  const fixture = MESSAGE_FIXTURES[chosen];
  const format = body.output_config?.format;
  if (!body.stream && format?.type === "json_schema" && chosen === "text") {
    // Structured outputs: the text block is JSON conforming to the schema.
    const message = readAnthropicJson(fixture.json);
    const content = [{ type: "text", text: JSON.stringify(instanceOf(format.schema)) }];
    return sendJson(res, 200, { ...message, model: body.model, content });
  }
  const offered = offeredTool(body);
  if (!body.stream) {
    const message = readAnthropicJson(fixture.json);
    if (offered) {
      message.content = message.content.map((block: any) =>
        block.type === "tool_use" ? { ...block, name: offered.name, input: offered.input } : block,
      );
    }
    return sendJson(res, 200, { ...message, model: body.model });
  }
  const fitted = new Set<number>();
  const events = readAnthropicSse(fixture.sse).map((event) => {
    const data = JSON.parse(event.data);
    if (event.event === "message_start") {
      return { event: event.event, data: { ...data, message: { ...data.message, model: body.model } } };
    }
    if (!offered) return event;
    if (data.content_block?.type === "tool_use") {
      return { event: event.event, data: { ...data, content_block: { ...data.content_block, name: offered.name } } };
    }
    if (data.delta?.type === "input_json_delta") {
      // The whole input in the block's first delta, nothing in the others.
      const first = !fitted.has(data.index);
      fitted.add(data.index);
      const partial = first ? JSON.stringify(offered.input) : "";
      return { event: event.event, data: { ...data, delta: { ...data.delta, partial_json: partial } } };
    }
    return event;
  });
  return writeSse(res, events, delayMs);
}

/**
 * The tool a tool-use answer calls when the request does not offer the fixtures' `get_weather`: the first tool
 * offered, with an input conforming to its input_schema (a model only calls tools it was given).
 */
function offeredTool(body: any): { name: string; input: unknown } | undefined {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return undefined;
  if (body.tools.some((tool: any) => tool?.name === "get_weather")) return undefined;
  const tool = body.tools[0];
  return { name: String(tool.name), input: instanceOf(tool.input_schema) ?? {} };
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
