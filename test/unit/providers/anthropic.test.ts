import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  anthropicAdapter,
  createAnthropicStreamTransformer,
  fromAnthropicMessage,
  fromAnthropicModelList,
  mapStopReason,
  toAnthropicMessagesRequest,
} from "../../../core/providers/anthropic/index.ts";
import { toChatUsage } from "../../../core/providers/anthropic/messages.ts";
import { loadProvider } from "../../../core/providers/registry.ts";
import type { TransformContext, UpstreamEvent, UpstreamRequest } from "../../../core/providers/types.ts";
import { UpstreamError } from "../../../core/providers/types.ts";
import {
  type AnthropicMock,
  parseSse,
  readAnthropicJson,
  readAnthropicSse,
  startAnthropicMock,
} from "../../mocks/anthropic.ts";

function context(overrides: Partial<TransformContext> = {}): TransformContext {
  return {
    target: { provider: "anthropic", apiKey: "sk-ant-test" },
    route: "chat",
    stream: false,
    model: "claude-sonnet-4-5",
    now: 1_700_000_000,
    requestId: "chatcmpl-test",
    includeUsage: false,
    ...overrides,
  };
}

const chat = anthropicAdapter.routes.chat!;

async function build(body: Record<string, any>, ctx = context()): Promise<{ request: UpstreamRequest; payload: any }> {
  const request = await chat.buildRequest({ model: "claude-sonnet-4-5", ...body }, ctx);
  return { request, payload: JSON.parse(String(request.body)) };
}

function convert(body: Record<string, any>) {
  return toAnthropicMessagesRequest({ model: "m", ...body }, { model: "m" });
}

function runStream(events: UpstreamEvent[], ctx = context({ stream: true })): any[] {
  const transformer = createAnthropicStreamTransformer(ctx);
  const chunks = events.flatMap((event) => transformer.push(event));
  return [...chunks, ...transformer.end()] as any[];
}

function catchError(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error("expected an UpstreamError");
}

describe("anthropic adapter: request", () => {
  it("is registered and builds POST {base}/v1/messages with Anthropic headers", async () => {
    expect(await loadProvider("anthropic")).toBe(anthropicAdapter);
    const ctx = context({
      target: { provider: "anthropic", apiKey: "sk-ant-test", forwardHeaders: { "anthropic-beta": "b1" } },
    });
    const { request, payload } = await build({ messages: [{ role: "user", content: "Hi" }] }, ctx);
    expect(request.url).toBe("https://api.anthropic.com/v1/messages");
    expect(request.method).toBe("POST");
    expect(request.headers).toEqual({
      "x-api-key": "sk-ant-test",
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "b1",
      "content-type": "application/json",
    });
    expect(payload).toEqual({
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 4096,
    });
  });

  it("uses the custom host, with or without its /v1 segment, and sets stream", async () => {
    const ctx = context({ stream: true, target: { provider: "anthropic", customHost: "http://127.0.0.1:9/" } });
    const { request, payload } = await build({ messages: [{ role: "user", content: "Hi" }], stream: true }, ctx);
    expect(request.url).toBe("http://127.0.0.1:9/v1/messages");
    expect(payload.stream).toBe(true);
    expect(request.headers["x-api-key"]).toBeUndefined();
    const v1 = await build(
      { messages: [] },
      context({ target: { provider: "anthropic", customHost: "https://proxy.example/v1" } }),
    );
    expect(v1.request.url).toBe("https://proxy.example/v1/messages");
  });

  it("moves system and developer messages, in order, to the top-level system", () => {
    const out = convert({
      messages: [
        { role: "system", content: "You are terse." },
        { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
        { role: "user", content: "Hi" },
      ],
    });
    expect(out.system).toBe("You are terse.\n\nAnswer in French.");
    expect(out.messages).toEqual([{ role: "user", content: "Hi" }]);

    const cached = convert({
      messages: [
        { role: "system", content: [{ type: "text", text: "Long context", cache_control: { type: "ephemeral" } }] },
        { role: "system", content: "Be kind." },
        { role: "user", content: "Hi" },
      ],
    });
    expect(cached.system).toEqual([
      { type: "text", text: "Long context", cache_control: { type: "ephemeral" } },
      { type: "text", text: "Be kind." },
    ]);
  });

  it("merges consecutive same-role messages so roles alternate", () => {
    const out = convert({
      messages: [
        { role: "user", content: "First" },
        { role: "user", content: [{ type: "text", text: "Second" }] },
        { role: "assistant", content: "Reply" },
        { role: "assistant", content: "More" },
        { role: "user", content: "Third" },
      ],
    });
    expect(out.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "First" },
          { type: "text", text: "Second" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Reply" },
          { type: "text", text: "More" },
        ],
      },
      { role: "user", content: "Third" },
    ]);
  });

  it("converts image parts: data URLs to base64 sources, http(s) URLs to url sources", () => {
    const out = convert({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Compare" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
            { type: "image_url", image_url: { url: "https://example.com/cat.jpg", detail: "high" } },
          ],
        },
      ],
    });
    expect(out.messages[0].content).toEqual([
      { type: "text", text: "Compare" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
    ]);
  });

  it("converts PDF file parts to document blocks and rejects audio", () => {
    const out = convert({
      messages: [
        {
          role: "user",
          content: [{ type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } }],
        },
      ],
    });
    expect(out.messages[0].content).toEqual([
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } },
    ]);
    const error = catchError(() =>
      convert({
        messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "", format: "wav" } }] }],
      }),
    );
    expect(error.status).toBe(400);
  });

  it("converts function tools and every tool_choice", () => {
    const tools = [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Weather for a city",
          parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
        },
      },
      { type: "function", function: { name: "no_params" } },
    ];
    const out = convert({ messages: [{ role: "user", content: "Hi" }], tools });
    expect(out.tools).toEqual([
      {
        name: "get_weather",
        description: "Weather for a city",
        input_schema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
      },
      { name: "no_params", input_schema: { type: "object", properties: {} } },
    ]);
    expect(out.tool_choice).toBeUndefined();

    const choice = (tool_choice: unknown, extra: Record<string, unknown> = {}) =>
      convert({ messages: [{ role: "user", content: "Hi" }], tools, tool_choice, ...extra }).tool_choice;
    expect(choice("auto")).toEqual({ type: "auto" });
    expect(choice("none")).toEqual({ type: "none" });
    expect(choice("required")).toEqual({ type: "any" });
    expect(choice({ type: "function", function: { name: "get_weather" } })).toEqual({
      type: "tool",
      name: "get_weather",
    });
    expect(choice("required", { parallel_tool_calls: false })).toEqual({
      type: "any",
      disable_parallel_tool_use: true,
    });
    expect(choice(undefined, { parallel_tool_calls: false })).toEqual({
      type: "auto",
      disable_parallel_tool_use: true,
    });
    expect(choice(undefined, { parallel_tool_calls: true })).toBeUndefined();

    // tool_choice without tools is not sent (Anthropic rejects it).
    expect(convert({ messages: [{ role: "user", content: "Hi" }], tool_choice: "auto" }).tool_choice).toBeUndefined();
  });

  it("maps assistant tool_calls to tool_use and tool messages to one user turn of tool_result blocks", () => {
    const out = convert({
      messages: [
        { role: "user", content: "Weather in Paris and Tokyo?" },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"location":"Paris"}' } },
            { id: "call_2", type: "function", function: { name: "get_weather", arguments: "{not json" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "18C" },
        { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "25C" }] },
        { role: "user", content: "Thanks, and tomorrow?" },
      ],
    });
    expect(out.messages).toEqual([
      { role: "user", content: "Weather in Paris and Tokyo?" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "call_1", name: "get_weather", input: { location: "Paris" } },
          { type: "tool_use", id: "call_2", name: "get_weather", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_1", content: "18C" },
          { type: "tool_result", tool_use_id: "call_2", content: [{ type: "text", text: "25C" }] },
          { type: "text", text: "Thanks, and tomorrow?" },
        ],
      },
    ]);
  });

  it("maps the deprecated functions, function_call and function role", () => {
    const out = convert({
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: null, function_call: { name: "get_weather", arguments: '{"location":"Oslo"}' } },
        { role: "function", name: "get_weather", content: "-3C" },
      ],
      functions: [{ name: "get_weather", parameters: { type: "object", properties: {} } }],
      function_call: { name: "get_weather" },
    });
    const toolUse = out.messages[1].content[0];
    expect(toolUse).toMatchObject({ type: "tool_use", name: "get_weather", input: { location: "Oslo" } });
    expect(out.messages[2].content).toEqual([{ type: "tool_result", tool_use_id: toolUse.id, content: "-3C" }]);
    expect(out.tools).toEqual([{ name: "get_weather", input_schema: { type: "object", properties: {} } }]);
    expect(out.tool_choice).toEqual({ type: "tool", name: "get_weather" });
  });

  it("passes thinking through with max_tokens above the budget, and echoes thinking blocks back", () => {
    const thinking = { type: "enabled", budget_tokens: 8000 };
    const out = convert({ messages: [{ role: "user", content: "Think" }], thinking });
    expect(out.thinking).toEqual(thinking);
    expect(out.max_tokens).toBeGreaterThan(8000);
    expect(convert({ messages: [{ role: "user", content: "Think" }], thinking, max_tokens: 20000 }).max_tokens).toBe(
      20000,
    );

    const echoed = convert({
      messages: [
        { role: "user", content: "Weather?" },
        {
          role: "assistant",
          content: null,
          content_blocks: [
            { type: "thinking", thinking: "Need the tool.", signature: "sig" },
            { type: "text", text: "ignored here" },
          ],
          tool_calls: [{ id: "toolu_1", type: "function", function: { name: "w", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "sunny" },
      ],
    });
    expect(echoed.messages[1].content).toEqual([
      { type: "thinking", thinking: "Need the tool.", signature: "sig" },
      { type: "tool_use", id: "toolu_1", name: "w", input: {} },
    ]);
  });

  it("maps max tokens, stop, sampling and user; drops OpenAI-only parameters", () => {
    const base = { messages: [{ role: "user", content: "Hi" }] };
    expect(convert(base).max_tokens).toBe(4096);
    expect(convert({ ...base, max_tokens: 100 }).max_tokens).toBe(100);
    expect(convert({ ...base, max_tokens: 100, max_completion_tokens: 200 }).max_tokens).toBe(200);
    expect(convert({ ...base, stop: "END" }).stop_sequences).toEqual(["END"]);
    expect(convert({ ...base, stop: ["a", "b"] }).stop_sequences).toEqual(["a", "b"]);
    expect(convert({ ...base, stop: null }).stop_sequences).toBeUndefined();

    const out = convert({
      ...base,
      temperature: 0.3,
      top_p: 0.9,
      user: "user-42",
      n: 1,
      frequency_penalty: 0.5,
      presence_penalty: 0.5,
      logit_bias: { "1": 2 },
      logprobs: true,
      top_logprobs: 2,
      seed: 7,
      response_format: { type: "json_object" },
      stream_options: { include_usage: true },
    });
    expect(out).toEqual({
      model: "m",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 4096,
      temperature: 0.3,
      top_p: 0.9,
      metadata: { user_id: "user-42" },
    });
    expect(convert({ ...base, temperature: 1.7 }).temperature).toBe(1);
  });

  it("maps a json_schema response_format to output_config.format", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const out = convert({
      messages: [{ role: "user", content: "Hi" }],
      response_format: { type: "json_schema", json_schema: { name: "answer", strict: true, schema } },
    });
    expect(out.output_config).toEqual({ format: { type: "json_schema", schema } });
  });

  it("rejects n > 1 with a 400 UpstreamError on param n", async () => {
    const error = catchError(() => convert({ messages: [{ role: "user", content: "Hi" }], n: 2 }));
    expect(error.status).toBe(400);
    expect(error.param).toBe("n");
    expect(error.message).toBe("n > 1 is not supported by anthropic");
    await expect(build({ messages: [{ role: "user", content: "Hi" }], n: 3 })).rejects.toBeInstanceOf(UpstreamError);
  });

  it("builds the body for Vertex-style callers (model in URL, anthropic_version in body)", () => {
    const out = toAnthropicMessagesRequest(
      { model: "claude", messages: [{ role: "user", content: "Hi" }] },
      { anthropicVersion: "vertex-2023-10-16", stream: true },
    );
    expect(out).toEqual({
      anthropic_version: "vertex-2023-10-16",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 4096,
      stream: true,
    });
  });
});

describe("anthropic adapter: response", () => {
  const ctx = context();

  it("keeps the 1-hour cache writes apart (they are priced at their own rate)", () => {
    expect(
      toChatUsage({
        input_tokens: 100,
        cache_read_input_tokens: 400,
        cache_creation_input_tokens: 300,
        cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
        output_tokens: 50,
      }),
    ).toEqual({
      prompt_tokens: 800,
      completion_tokens: 50,
      total_tokens: 850,
      prompt_tokens_details: { cached_tokens: 400, cache_creation_tokens: 300, cache_creation_1h_tokens: 200 },
    });
  });

  it("maps a text message", () => {
    expect(chat.transformResponse(readAnthropicJson("message-text.json"), ctx)).toEqual({
      id: "msg_01Xq7TextFixture0001",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "claude-sonnet-4-5-20250929",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Hello! How can I help you today?", refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: {
        prompt_tokens: 12,
        completion_tokens: 10,
        total_tokens: 22,
        prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 0 },
      },
    });
  });

  it("maps tool_use blocks to tool_calls", () => {
    const out: any = chat.transformResponse(readAnthropicJson("message-tool-use.json"), ctx);
    expect(out.choices[0].finish_reason).toBe("tool_calls");
    expect(out.choices[0].message).toEqual({
      role: "assistant",
      content: "I'll check the weather in Paris.",
      refusal: null,
      tool_calls: [
        {
          id: "toolu_01A09q90qw90lq917835lq9",
          type: "function",
          function: { name: "get_weather", arguments: JSON.stringify({ location: "Paris, France", unit: "celsius" }) },
        },
      ],
    });
  });

  it("maps thinking to reasoning_content and content_blocks", () => {
    const out: any = chat.transformResponse(readAnthropicJson("message-thinking.json"), ctx);
    const message = out.choices[0].message;
    expect(message.content).toBe("27 × 453 = 12,231.");
    expect(message.reasoning_content).toContain("= 12231.");
    expect(message.content_blocks).toEqual([
      { type: "thinking", thinking: expect.stringContaining("27 * 453"), signature: expect.any(String) },
      { type: "redacted_thinking", data: expect.any(String) },
      { type: "text", text: "27 × 453 = 12,231." },
    ]);
  });

  it("counts cache reads and writes into prompt tokens", () => {
    const out: any = chat.transformResponse(readAnthropicJson("message-cache-usage.json"), ctx);
    expect(out.choices[0].finish_reason).toBe("length");
    expect(out.usage).toEqual({
      prompt_tokens: 21 + 188086 + 1500,
      completion_tokens: 393,
      total_tokens: 21 + 188086 + 1500 + 393,
      prompt_tokens_details: { cached_tokens: 1500, cache_creation_tokens: 188086 },
    });
  });

  it("maps every stop reason", () => {
    expect(mapStopReason("end_turn")).toBe("stop");
    expect(mapStopReason("stop_sequence")).toBe("stop");
    expect(mapStopReason("pause_turn")).toBe("stop");
    expect(mapStopReason("max_tokens")).toBe("length");
    expect(mapStopReason("tool_use")).toBe("tool_calls");
    expect(mapStopReason("refusal")).toBe("content_filter");
    expect(mapStopReason(null)).toBeNull();
  });

  it("gives null content when there is no text block, and falls back to ctx for id and model", () => {
    const out: any = fromAnthropicMessage({ type: "message", content: [], stop_reason: "refusal", usage: {} }, ctx);
    expect(out.id).toBe("chatcmpl-test");
    expect(out.model).toBe("claude-sonnet-4-5");
    expect(out.choices[0]).toMatchObject({
      message: { role: "assistant", content: null },
      finish_reason: "content_filter",
    });
  });

  it("throws an UpstreamError for an error body in a 2xx", () => {
    const error = catchError(() => chat.transformResponse(readAnthropicJson("error-overloaded.json"), ctx));
    expect(error).toMatchObject({
      status: 503,
      type: "overloaded_error",
      code: "overloaded_error",
      message: "Overloaded",
    });
  });

  it("maps the model list", async () => {
    const models = anthropicAdapter.routes.models!;
    const request = await models.buildRequest({}, context({ route: "models" }));
    expect(request).toMatchObject({ method: "GET", url: "https://api.anthropic.com/v1/models?limit=1000" });
    expect(fromAnthropicModelList(readAnthropicJson("models-list.json"))).toEqual({
      object: "list",
      data: [
        {
          id: "claude-sonnet-4-5-20250929",
          object: "model",
          created: Date.UTC(2025, 8, 29) / 1000,
          owned_by: "anthropic",
          display_name: "Claude Sonnet 4.5",
        },
        {
          id: "claude-haiku-4-5-20251001",
          object: "model",
          created: Date.UTC(2025, 9, 1) / 1000,
          owned_by: "anthropic",
          display_name: "Claude Haiku 4.5",
        },
      ],
    });
  });
});

describe("anthropic adapter: stream", () => {
  it("declares SSE framing", () => {
    expect(chat.stream?.framing).toBe("sse");
  });

  it("parses the SSE fixtures into events", () => {
    const events = parseSse("event: ping\ndata: {}\n\n: comment\n\nevent: x\ndata: a\ndata: b\n\n");
    expect(events).toEqual([
      { event: "ping", data: "{}" },
      { event: "x", data: "a\nb" },
    ]);
  });

  it("streams text, the finish reason and a final usage chunk", () => {
    const chunks = runStream(readAnthropicSse("stream-text.sse"));
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: "msg_01StreamText0001",
        object: "chat.completion.chunk",
        created: 1_700_000_000,
        model: "claude-sonnet-4-5-20250929",
      });
    }
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: "assistant", content: "" },
      { content: "Hello" },
      { content: ", world!" },
      {},
      undefined,
    ]);
    expect(chunks.map((c) => c.choices[0]?.finish_reason ?? null)).toEqual([null, null, null, "stop", null]);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 125,
        completion_tokens: 15,
        total_tokens: 140,
        prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 0 },
      },
    });
  });

  it("streams tool calls with running indexes and partial JSON arguments", () => {
    const chunks = runStream(readAnthropicSse("stream-tool-use.sse"));
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(toolDeltas[0]).toEqual({
      index: 0,
      id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
      type: "function",
      function: { name: "get_weather", arguments: "" },
    });
    expect(toolDeltas.find((d) => d.index === 1 && d.id)).toMatchObject({ id: "toolu_01Bq9VnE7tK2mQ3hZs8Yd4Rc" });
    const args = (index: number) =>
      toolDeltas
        .filter((d) => d.index === index)
        .map((d) => d.function.arguments)
        .join("");
    expect(JSON.parse(args(0))).toEqual({ location: "Paris" });
    expect(JSON.parse(args(1))).toEqual({ location: "Tokyo" });
    expect(chunks.map((c) => c.choices[0]?.delta?.content).filter(Boolean)).toEqual(["Let me check both cities."]);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: 472, completion_tokens: 89 });
  });

  it("streams thinking as reasoning_content and the signature in content_blocks", () => {
    const chunks = runStream(readAnthropicSse("stream-thinking.sse"));
    const reasoning = chunks.map((c) => c.choices[0]?.delta?.reasoning_content ?? "").join("");
    expect(reasoning).toBe("27 * 453 = 10800 + 1431 = 12231.");
    const signature = chunks.flatMap((c) => c.choices[0]?.delta?.content_blocks ?? []);
    expect(signature).toEqual([{ index: 0, type: "thinking", signature: expect.any(String) }]);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("27 × 453 = 12,231.");
  });

  it("throws an UpstreamError on an error event", () => {
    const events = readAnthropicSse("stream-error.sse");
    const transformer = createAnthropicStreamTransformer(context({ stream: true }));
    const before = events.slice(0, -1).flatMap((event) => transformer.push(event)) as any[];
    expect(before.map((c) => c.choices[0].delta.content)).toEqual(["", "Partial"]);
    const error = catchError(() => transformer.push(events.at(-1)!));
    expect(error).toMatchObject({ status: 503, type: "overloaded_error", message: "Overloaded" });

    const status = (type: string) =>
      catchError(() =>
        createAnthropicStreamTransformer(context()).push({
          event: "error",
          data: JSON.stringify({ type: "error", error: { type, message: type } }),
        }),
      ).status;
    expect(status("rate_limit_error")).toBe(429);
    expect(status("api_error")).toBe(500);
    expect(status("invalid_request_error")).toBe(400);
  });

  it("maps finish reasons in message_delta and flushes usage at end when message_stop is missing", () => {
    const transformer = createAnthropicStreamTransformer(context());
    transformer.push({
      event: "message_start",
      data: JSON.stringify({ type: "message_start", message: { id: "msg_1", model: "c", usage: { input_tokens: 3 } } }),
    });
    const [finish] = transformer.push({
      event: "message_delta",
      data: JSON.stringify({
        type: "message_delta",
        delta: { stop_reason: "max_tokens" },
        usage: { output_tokens: 9 },
      }),
    }) as any[];
    expect(finish.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: "length" });
    expect(transformer.end()).toEqual([
      expect.objectContaining({ choices: [], usage: expect.objectContaining({ total_tokens: 12 }) }),
    ]);
  });
});

describe("anthropic mock server", () => {
  let mock: AnthropicMock;
  beforeAll(async () => {
    mock = await startAnthropicMock();
  });
  afterAll(() => mock.close());

  const ctxFor = (stream: boolean) =>
    context({ stream, model: "claude-x", target: { provider: "anthropic", apiKey: "k", customHost: mock.url } });

  async function send(request: UpstreamRequest): Promise<Response> {
    return fetch(request.url, { method: request.method, headers: request.headers, body: request.body as string });
  }

  it("answers a built request with a message the adapter transforms", async () => {
    const ctx = ctxFor(false);
    const request = await chat.buildRequest({ model: "claude-x", messages: [{ role: "user", content: "Hi" }] }, ctx);
    const response = await send(request);
    expect(response.status).toBe(200);
    const out: any = chat.transformResponse(await response.json(), ctx);
    expect(out.model).toBe("claude-x");
    expect(out.choices[0].message.content).toBe("Hello! How can I help you today?");
    expect(mock.requests.at(-1)?.headers["anthropic-version"]).toBe("2023-06-01");
  });

  it("streams fixture events for stream: true", async () => {
    const ctx = ctxFor(true);
    const body = {
      model: "claude-x",
      stream: true,
      messages: [{ role: "user", content: "Weather?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
    };
    const response = await send(await chat.buildRequest(body, ctx));
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const chunks = runStream(parseSse(await response.text()), ctx);
    expect(chunks[0].model).toBe("claude-x");
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe("tool_calls");
  });

  it("answers errors in Anthropic's shape", async () => {
    mock.setScenario("overloaded");
    const response = await send(
      await chat.buildRequest({ model: "c", messages: [{ role: "user", content: "Hi" }] }, ctxFor(false)),
    );
    mock.setScenario("auto");
    expect(response.status).toBe(529);
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    });
  });
});
