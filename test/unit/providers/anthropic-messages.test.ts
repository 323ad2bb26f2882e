import { describe, expect, it } from "vitest";
import {
  anthropicAdapter,
  anthropicCountTokensRequest,
  anthropicMessagesRoute,
} from "../../../core/providers/anthropic/index.ts";
import { loadProvider } from "../../../core/providers/registry.ts";
import { type TransformContext, type UpstreamEvent, UpstreamError } from "../../../core/providers/types.ts";
import { readAnthropicJson, readAnthropicSse } from "../../mocks/anthropic.ts";

function context(overrides: Partial<TransformContext> = {}): TransformContext {
  return {
    target: { provider: "anthropic", apiKey: "sk-ant-test" },
    route: "messages",
    stream: false,
    model: "claude-sonnet-4-5",
    now: 1_700_000_000,
    requestId: "req-1",
    includeUsage: false,
    ...overrides,
  };
}

const body = {
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
  messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
  thinking: { type: "enabled", budget_tokens: 2048 },
  container: "ctr_kept",
};

function run(events: UpstreamEvent[]): unknown[] {
  const transformer = anthropicMessagesRoute.stream!.createTransformer(context({ stream: true }));
  return [...events.flatMap((event) => transformer.push(event)), ...transformer.end()];
}

function caught(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error("expected an UpstreamError");
}

describe("anthropic: native messages route", () => {
  it("is the adapter's messages route, native for every model", async () => {
    expect((await loadProvider("anthropic"))?.routes.messages).toBe(anthropicMessagesRoute);
    expect(anthropicAdapter.routes.messages?.supportsModel).toBeUndefined();
  });

  it("sends the body as it is to /v1/messages with version, key and forwarded headers", async () => {
    const ctx = context({
      model: "claude-opus-4-1",
      target: {
        provider: "anthropic",
        apiKey: "sk-ant-test",
        forwardHeaders: { "Anthropic-Beta": "context-1m-2025-08-07" },
      },
    });
    const request = await anthropicMessagesRoute.buildRequest({ ...body, stream: false }, ctx);
    expect(request.url).toBe("https://api.anthropic.com/v1/messages");
    expect(request.method).toBe("POST");
    expect(request.headers).toEqual({
      "anthropic-version": "2023-06-01",
      "x-api-key": "sk-ant-test",
      "anthropic-beta": "context-1m-2025-08-07",
      "content-type": "application/json",
    });
    // The model as resolved (a config may override it); `stream` only when the gateway streams.
    expect(JSON.parse(String(request.body))).toEqual({ ...body, model: "claude-opus-4-1" });
  });

  it("asks for a stream when the gateway streams, on a custom host", async () => {
    const ctx = context({ stream: true, target: { provider: "anthropic", customHost: "http://127.0.0.1:9/v1" } });
    const request = await anthropicMessagesRoute.buildRequest({ ...body, stream: true }, ctx);
    expect(request.url).toBe("http://127.0.0.1:9/v1/messages");
    expect(JSON.parse(String(request.body)).stream).toBe(true);
  });

  it("returns the Message as it is, and throws for an error body", () => {
    const message = readAnthropicJson("message-thinking.json");
    expect(anthropicMessagesRoute.transformResponse(message, context())).toEqual(
      readAnthropicJson("message-thinking.json"),
    );
    const error = caught(() =>
      anthropicMessagesRoute.transformResponse(readAnthropicJson("error-overloaded.json"), context()),
    );
    expect(error).toMatchObject({ status: 503, type: "overloaded_error", message: "Overloaded" });
    expect(caught(() => anthropicMessagesRoute.transformResponse({ nope: true }, context())).status).toBe(502);
  });

  it("passes each stream event on as it is, ping included", () => {
    const events = readAnthropicSse("stream-thinking.sse");
    expect(run(events)).toEqual(events.map((event) => JSON.parse(event.data)));
    const text = run(readAnthropicSse("stream-text.sse")) as Array<{ type: string }>;
    expect(text.map((event) => event.type)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });

  it("throws the stream's error event as an UpstreamError", () => {
    const transformer = anthropicMessagesRoute.stream!.createTransformer(context({ stream: true }));
    const [start, blockStart, delta, errorEvent] = readAnthropicSse("stream-error.sse");
    expect([start!, blockStart!, delta!].flatMap((event) => transformer.push(event))).toHaveLength(3);
    const error = caught(() => transformer.push(errorEvent!));
    expect(error).toMatchObject({ status: 503, type: "overloaded_error" });
    // After the error, end() adds nothing of its own.
    expect(transformer.end()).toEqual([]);
  });

  it("says a stream cut before message_stop is incomplete, and ignores [DONE]", () => {
    const events = readAnthropicSse("stream-text.sse");
    const transformer = anthropicMessagesRoute.stream!.createTransformer(context({ stream: true }));
    for (const event of events.slice(0, 4)) transformer.push(event);
    expect(caught(() => transformer.end())).toMatchObject({ status: 502, code: "incomplete_stream" });
    expect(run([...events, { data: "[DONE]" }])).toHaveLength(events.length);
    expect(caught(() => run([{ event: "message_start", data: "{oops" }])).status).toBe(502);
  });
});

describe("anthropic: count_tokens request", () => {
  it("posts only the fields count_tokens takes", () => {
    const request = anthropicCountTokensRequest(
      {
        ...body,
        tools: [{ name: "f", input_schema: { type: "object" } }],
        tool_choice: { type: "auto" },
        stream: true,
        temperature: 0.5,
        metadata: { user_id: "u" },
      },
      context({ model: "claude-haiku-4-5" }),
    );
    expect(request.url).toBe("https://api.anthropic.com/v1/messages/count_tokens");
    expect(request.method).toBe("POST");
    expect(request.headers).toMatchObject({ "anthropic-version": "2023-06-01", "x-api-key": "sk-ant-test" });
    expect(JSON.parse(String(request.body))).toEqual({
      model: "claude-haiku-4-5",
      messages: body.messages,
      system: body.system,
      thinking: body.thinking,
      tools: [{ name: "f", input_schema: { type: "object" } }],
      tool_choice: { type: "auto" },
    });
  });
});
