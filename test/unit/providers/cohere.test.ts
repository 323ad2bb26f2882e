import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { toCohereChatRequest } from "../../../core/providers/cohere/chat.ts";
import { cohereAdapter } from "../../../core/providers/cohere/index.ts";
import { mapUpstreamError } from "../../../core/providers/errors.ts";
import { decodeSse } from "../../../core/providers/stream/sse.ts";
import type {
  ProviderTarget,
  RouteKind,
  StreamTransformer,
  TransformContext,
  UpstreamEvent,
  UpstreamRequest,
} from "../../../core/providers/types.ts";
import { UpstreamError } from "../../../core/providers/types.ts";
import { type CohereMock, startCohereMock } from "../../mocks/cohere.ts";

const fixture = (dir: string, name: string) => new URL(`../../fixtures/${dir}/${name}`, import.meta.url);
const json = (dir: string, name: string) => JSON.parse(readFileSync(fixture(dir, name), "utf8"));

function ctx(
  overrides: Partial<Omit<TransformContext, "target">> & { target?: Partial<ProviderTarget> } = {},
): TransformContext {
  const { target, ...rest } = overrides;
  return {
    route: "chat",
    stream: false,
    model: "command-a-03-2025",
    now: 1_700_000_000,
    requestId: "chatcmpl-req1",
    includeUsage: false,
    ...rest,
    target: { provider: "cohere", apiKey: "co-test", ...target },
  };
}

function build(route: RouteKind, body: Record<string, any>, context = ctx({ route })): UpstreamRequest {
  const request = cohereAdapter.routes[route]?.buildRequest(body, context);
  if (!request || request instanceof Promise) throw new Error("expected a synchronous request");
  return request;
}

const sent = (request: UpstreamRequest) => JSON.parse(String(request.body));

function thrown(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error("expected an UpstreamError");
}

async function* single(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

async function events(source: AsyncIterable<Uint8Array>): Promise<UpstreamEvent[]> {
  const out: UpstreamEvent[] = [];
  for await (const event of decodeSse(source)) out.push(event);
  return out;
}

function run(transformer: StreamTransformer, list: UpstreamEvent[]): any[] {
  return list.flatMap((event) => transformer.push(event)).concat(transformer.end());
}

const streamOf = (name: string) => events(single(readFileSync(fixture("cohere", name))));
const transformer = () => {
  const stream = cohereAdapter.routes.chat?.stream;
  if (!stream) throw new Error("chat must stream");
  expect(stream.framing).toBe("sse");
  return stream.createTransformer(ctx({ stream: true }));
};

describe("cohere chat request", () => {
  it("posts to /v2/chat with a bearer key, or to the custom host", () => {
    const request = build("chat", { model: "command-a-03-2025", messages: [{ role: "user", content: "hi" }] });
    expect(request.url).toBe("https://api.cohere.com/v2/chat");
    expect(request.method).toBe("POST");
    expect(request.headers).toMatchObject({ authorization: "Bearer co-test", "content-type": "application/json" });
    const custom = build("chat", { messages: [] }, ctx({ target: { customHost: "http://127.0.0.1:7000/" } }));
    expect(custom.url).toBe("http://127.0.0.1:7000/v2/chat");
  });

  it("maps an OpenAI request: roles, image parts, strict tools, sampling params", () => {
    const out = sent(build("chat", json("openai", "chat-request.json")));
    expect(out).toEqual({
      model: "gpt-4o",
      messages: [
        { role: "system", content: "You are a weather assistant." },
        {
          role: "user",
          content: [
            { type: "text", text: "Weather in Paris?" },
            { type: "image_url", image_url: { url: "https://example.com/sky.png", detail: "low" } },
          ],
        },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "Current weather for a city",
            parameters: json("openai", "chat-request.json").tools[0].function.parameters,
          },
        },
      ],
      strict_tools: true,
      max_tokens: 256,
      temperature: 0.2,
      p: 0.9,
      stop_sequences: ["\n\n"],
      seed: 42,
      frequency_penalty: 0.1,
      presence_penalty: 0.1,
      logprobs: true,
    });
  });

  it("maps tool_choice: required, none, a named function; auto is the default", () => {
    const tools = [
      { type: "function", function: { name: "a", parameters: { type: "object", properties: {} } } },
      { type: "function", function: { name: "b", parameters: { type: "object", properties: {} } } },
    ];
    const base = { model: "m", messages: [{ role: "user", content: "x" }], tools };
    expect(toCohereChatRequest({ ...base, tool_choice: "required" }, ctx()).tool_choice).toBe("REQUIRED");
    expect(toCohereChatRequest({ ...base, tool_choice: "none" }, ctx()).tool_choice).toBe("NONE");
    expect(toCohereChatRequest({ ...base, tool_choice: "auto" }, ctx())).not.toHaveProperty("tool_choice");
    const named = toCohereChatRequest({ ...base, tool_choice: { type: "function", function: { name: "b" } } }, ctx());
    expect(named.tool_choice).toBe("REQUIRED");
    expect((named.tools as any[]).map((tool) => tool.function.name)).toEqual(["b"]);
    expect(toCohereChatRequest({ model: "m", messages: [], tool_choice: "required" }, ctx())).not.toHaveProperty(
      "tool_choice",
    );
  });

  it("maps response_format json_object and json_schema", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    expect(
      toCohereChatRequest({ messages: [], response_format: { type: "json_object" } }, ctx()).response_format,
    ).toEqual({ type: "json_object" });
    expect(
      toCohereChatRequest(
        { messages: [], response_format: { type: "json_schema", json_schema: { name: "a", schema, strict: true } } },
        ctx(),
      ).response_format,
    ).toEqual({ type: "json_object", json_schema: schema });
    expect(toCohereChatRequest({ messages: [], response_format: { type: "text" } }, ctx())).not.toHaveProperty(
      "response_format",
    );
  });

  it("maps a tool round trip: assistant tool_calls (text as tool_plan) and tool results", () => {
    const out = toCohereChatRequest(
      {
        model: "m",
        max_tokens: 100,
        messages: [
          { role: "developer", content: [{ type: "text", text: "Be brief." }] },
          { role: "user", content: "Weather?" },
          {
            role: "assistant",
            content: "I will look it up.",
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
            ],
          },
          { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: '{"temp":21}' }] },
          { role: "assistant", content: "It is 21°C." },
        ],
      },
      ctx(),
    );
    expect(out.max_tokens).toBe(100);
    expect(out.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        tool_plan: "I will look it up.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"temp":21}' },
      { role: "assistant", content: "It is 21°C." },
    ]);
  });

  it("streams when the client streams", () => {
    expect(sent(build("chat", { messages: [], stream: true }, ctx({ stream: true }))).stream).toBe(true);
    expect(sent(build("chat", { messages: [] }))).not.toHaveProperty("stream");
  });

  it("rejects what Cohere cannot take with a 400", () => {
    const audio = thrown(() =>
      build("chat", {
        messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "", format: "wav" } }] }],
      }),
    );
    expect(audio.status).toBe(400);
    expect(thrown(() => build("chat", { messages: [{ role: "function", name: "f", content: "x" }] })).status).toBe(400);
  });
});

describe("cohere chat response", () => {
  it("maps a text answer with usage (tokens over billed units, cached tokens)", () => {
    const out = cohereAdapter.routes.chat?.transformResponse(json("cohere", "chat-response.json"), ctx());
    expect(out).toEqual({
      id: "5a50480a-cf52-46f0-af01-53d18539bd31",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "command-a-03-2025",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "The tallest penguins are emperor penguins.", refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: {
        prompt_tokens: 215,
        completion_tokens: 8,
        total_tokens: 223,
        prompt_tokens_details: { cached_tokens: 192 },
      },
    });
  });

  it("maps tool calls, the tool plan and TOOL_CALL", () => {
    const out: any = cohereAdapter.routes.chat?.transformResponse(json("cohere", "chat-response-tools.json"), ctx());
    expect(out.choices[0].finish_reason).toBe("tool_calls");
    expect(out.choices[0].message.content).toBe("I will look up the weather in Paris.");
    expect(out.choices[0].message.tool_calls).toEqual([
      {
        id: "get_weather_1byjy32y4hvq",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Paris","unit":"celsius"}' },
      },
    ]);
    expect(out.usage).toEqual({ prompt_tokens: 912, completion_tokens: 52, total_tokens: 964 });
  });

  it("maps MAX_TOKENS to length and falls back to billed units", () => {
    const out: any = cohereAdapter.routes.chat?.transformResponse(json("cohere", "chat-response-length.json"), ctx());
    expect(out.choices[0].finish_reason).toBe("length");
    const billed: any = cohereAdapter.routes.chat?.transformResponse(
      {
        id: "x",
        message: { role: "assistant", content: [] },
        finish_reason: "STOP_SEQUENCE",
        usage: { billed_units: { input_tokens: 3, output_tokens: 2 } },
      },
      ctx(),
    );
    expect(billed.choices[0].finish_reason).toBe("stop");
    expect(billed.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });

  it("turns finish_reason ERROR into an upstream error", () => {
    const error = thrown(() =>
      cohereAdapter.routes.chat?.transformResponse(
        { id: "x", message: { role: "assistant" }, finish_reason: "ERROR" },
        ctx(),
      ),
    );
    expect(error.status).toBe(502);
  });

  it("reads Cohere error bodies with the generic mapper", () => {
    const error = mapUpstreamError(400, readFileSync(fixture("cohere", "error-400.json"), "utf8"));
    expect(error.message).toMatch(/at least 1 token/);
    expect(error.type).toBe("invalid_request_error");
  });
});

describe("cohere chat stream", () => {
  it("turns text events into OpenAI chunks and a final usage chunk", async () => {
    const chunks = run(transformer(), await streamOf("chat-stream.sse"));
    expect(chunks).toHaveLength(5);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: "29f14a5a-11de-4cae-9800-25e4747408ea",
        object: "chat.completion.chunk",
        model: "command-a-03-2025",
      });
    }
    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    expect(
      chunks
        .slice(1, 3)
        .map((chunk) => chunk.choices[0].delta.content)
        .join(""),
    ).toBe("Emperor penguins.");
    expect(chunks[3].choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
    expect(chunks[4]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 215, completion_tokens: 3, total_tokens: 218 },
    });
  });

  it("turns tool events into tool_call deltas with stable indexes", async () => {
    const chunks = run(transformer(), await streamOf("chat-stream-tools.sse"));
    const deltas = chunks.filter((chunk) => chunk.choices.length > 0).map((chunk) => chunk.choices[0].delta);
    expect(
      deltas
        .filter((delta) => delta.content)
        .map((delta) => delta.content)
        .join(""),
    ).toBe("I will check both cities.");
    const calls = deltas.flatMap((delta) => delta.tool_calls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: "get_weather_nsz5zm3w56q3",
      type: "function",
      function: { name: "get_weather", arguments: "" },
    });
    const args = (index: number) =>
      calls
        .filter((call) => call.index === index)
        .map((call) => call.function.arguments)
        .join("");
    expect(args(0)).toBe('{"city":"Paris"}');
    expect(args(1)).toBe('{"city":"Oslo"}');
    expect(calls.find((call) => call.index === 1)?.id).toBe("get_weather_0p2k9x7m1c4d");
    expect(chunks.at(-2).choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 912, completion_tokens: 60, total_tokens: 972 });
  });

  it("throws on a message-end with finish_reason ERROR", async () => {
    const list = await streamOf("chat-stream-error.sse");
    const stream = transformer();
    const emitted = list.slice(0, 2).flatMap((event) => stream.push(event));
    expect(emitted.map((chunk: any) => chunk.choices[0].delta.content ?? "").join("")).toBe("Partial");
    let error: unknown;
    try {
      stream.push(list[2]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toMatch(/internal server error/);
  });

  it("throws when the stream ends without message-end, or sends garbage", async () => {
    const list = await streamOf("chat-stream.sse");
    const cut = transformer();
    for (const event of list.slice(0, 3)) cut.push(event);
    expect(() => cut.end()).toThrow(UpstreamError);
    expect(() => transformer().push({ event: "content-delta", data: "{nope" })).toThrow(UpstreamError);
  });

  it("emits the assistant role first even without message-start, and maps thinking", () => {
    const stream = transformer();
    const chunks: any[] = stream.push({
      data: JSON.stringify({ type: "content-delta", index: 0, delta: { message: { content: { thinking: "Hmm." } } } }),
    });
    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    expect(chunks[1].choices[0].delta).toEqual({ reasoning_content: "Hmm." });
    expect(chunks[1].id).toBe("chatcmpl-req1");
  });
});

describe("cohere embed", () => {
  it("maps an OpenAI embeddings request to /v2/embed", () => {
    const request = build(
      "embeddings",
      { model: "embed-v4.0", input: "hello", dimensions: 512 },
      ctx({ route: "embeddings" }),
    );
    expect(request.url).toBe("https://api.cohere.com/v2/embed");
    expect(sent(request)).toEqual({
      model: "embed-v4.0",
      texts: ["hello"],
      input_type: "search_document",
      embedding_types: ["float"],
      output_dimension: 512,
    });
    const query = sent(
      build(
        "embeddings",
        { model: "embed-v4.0", input: ["a", "b"], input_type: "search_query" },
        ctx({ route: "embeddings" }),
      ),
    );
    expect(query).toMatchObject({ texts: ["a", "b"], input_type: "search_query" });
    expect(query).not.toHaveProperty("output_dimension");
  });

  it("rejects token-id inputs with a 400", () => {
    expect(
      thrown(() => build("embeddings", { model: "e", input: [[1, 2, 3]] }, ctx({ route: "embeddings" }))).status,
    ).toBe(400);
    expect(thrown(() => build("embeddings", { model: "e", input: [] }, ctx({ route: "embeddings" }))).status).toBe(400);
  });

  it("maps the response to an OpenAI embedding list with usage from billed units", () => {
    const out = cohereAdapter.routes.embeddings?.transformResponse(
      json("cohere", "embed-response.json"),
      ctx({ route: "embeddings", model: "embed-v4.0" }),
    );
    expect(out).toEqual({
      object: "list",
      data: [
        { object: "embedding", index: 0, embedding: [0.016296387, -0.008354187, -0.04699707, -0.07104492] },
        { object: "embedding", index: 1, embedding: [-0.02130127, 0.0146484375, 0.0043678284, 0.033447266] },
      ],
      model: "embed-v4.0",
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
  });

  it("encodes vectors as base64 float32 when the client asked for base64", () => {
    const context = ctx({ route: "embeddings" });
    build("embeddings", { model: "e", input: "hello", encoding_format: "base64" }, context);
    const out: any = cohereAdapter.routes.embeddings?.transformResponse(json("cohere", "embed-response.json"), context);
    const bytes = Uint8Array.from(Buffer.from(out.data[0].embedding, "base64"));
    expect(Array.from(new Float32Array(bytes.buffer))).toEqual(
      Array.from(new Float32Array([0.016296387, -0.008354187, -0.04699707, -0.07104492])),
    );
  });

  it("offers chat, embeddings and rerank only", () => {
    expect(Object.keys(cohereAdapter.routes).sort()).toEqual(["chat", "embeddings", "rerank"]);
    expect(cohereAdapter.id).toBe("cohere");
  });
});

describe("against the mock Cohere API", () => {
  let mock: CohereMock;
  beforeAll(async () => {
    mock = await startCohereMock({ apiKey: "co-test" });
  });
  afterAll(() => mock.close());
  beforeEach(() => {
    mock.reset();
    mock.options = { apiKey: "co-test" };
  });

  async function call(route: RouteKind, body: Record<string, any>, context: TransformContext) {
    const request = build(route, body, context);
    return fetch(request.url, { method: request.method, headers: request.headers, body: request.body as string });
  }
  const at = (extra: Partial<Omit<TransformContext, "target">> = {}) =>
    ctx({ ...extra, target: { customHost: mock.url } });

  it("round-trips a chat answer", async () => {
    mock.options.reply = "Bonjour tout le monde";
    const response = await call(
      "chat",
      { model: "command-a-03-2025", messages: [{ role: "user", content: "hi" }] },
      at(),
    );
    const out: any = cohereAdapter.routes.chat?.transformResponse(await response.json(), at());
    expect(out.choices[0].message.content).toBe("Bonjour tout le monde");
    expect(mock.lastRequest()?.path).toBe("/v2/chat");
  });

  it("round-trips a streamed tool call", async () => {
    const context = at({ stream: true });
    const body = {
      model: "command-a-03-2025",
      stream: true,
      messages: [{ role: "user", content: "weather?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }],
    };
    mock.options.toolArguments = { city: "Paris" };
    const response = await call("chat", body, context);
    const stream = cohereAdapter.routes.chat?.stream?.createTransformer(context) as StreamTransformer;
    const chunks = run(stream, await events(response.body as AsyncIterable<Uint8Array>));
    const args = chunks
      .flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? [])
      .map((call: any) => call.function.arguments)
      .join("");
    expect(JSON.parse(args)).toEqual({ city: "Paris" });
    expect(chunks.at(-1).usage.total_tokens).toBeGreaterThan(0);
  });

  it("round-trips embeddings and rejects a wrong key", async () => {
    const response = await call(
      "embeddings",
      { model: "embed-v4.0", input: ["a", "b"], dimensions: 4 },
      at({ route: "embeddings" }),
    );
    const out: any = cohereAdapter.routes.embeddings?.transformResponse(
      await response.json(),
      at({ route: "embeddings" }),
    );
    expect(out.data).toHaveLength(2);
    expect(out.data[0].embedding).toHaveLength(4);
    const denied = await call(
      "chat",
      { model: "m", messages: [] },
      ctx({ target: { customHost: mock.url, apiKey: "bad" } }),
    );
    expect(denied.status).toBe(401);
  });

  it("plays a mid-stream error as a message-end ERROR", async () => {
    mock.setFault({ streamFailAfter: 2, streamFailure: "error-event" });
    const context = at({ stream: true });
    const response = await call(
      "chat",
      { model: "m", stream: true, messages: [{ role: "user", content: "x" }] },
      context,
    );
    const stream = cohereAdapter.routes.chat?.stream?.createTransformer(context) as StreamTransformer;
    const list = await events(response.body as AsyncIterable<Uint8Array>);
    expect(() => run(stream, list)).toThrow(/mid-stream/);
  });
});
