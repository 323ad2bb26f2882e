import { createHash } from "node:crypto";
import { Sha256 } from "@aws-crypto/sha256-js";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { SignatureV4 } from "@smithy/signature-v4";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bedrockAdapter } from "../../../core/providers/bedrock/index.ts";
import { AwsEventStreamDecoder, decodeAwsEventStream } from "../../../core/providers/stream/aws-eventstream.ts";
import {
  type TransformContext,
  type UpstreamEvent,
  UpstreamError,
  type UpstreamRequest,
} from "../../../core/providers/types.ts";
import {
  type BedrockMock,
  type BedrockStreamEvent,
  checkSigV4,
  encodeBedrockStream,
  readBedrockJson,
  readBedrockStream,
  startBedrockMock,
} from "../../mocks/bedrock.ts";

const CLAUDE = "anthropic.claude-3-5-sonnet-20240620-v1:0";
const CREDENTIALS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };

function ctx(overrides: Partial<TransformContext> = {}): TransformContext {
  return {
    target: { provider: "bedrock", aws: { ...CREDENTIALS, region: "eu-west-1" } },
    route: "chat",
    stream: false,
    model: CLAUDE,
    now: 1_700_000_000,
    requestId: "chatcmpl-test",
    includeUsage: false,
    ...overrides,
  };
}

const chat = bedrockAdapter.routes.chat!;
const embeddings = bedrockAdapter.routes.embeddings!;

async function build(body: Record<string, any>, context = ctx()): Promise<{ request: UpstreamRequest; payload: any }> {
  const request = await chat.buildRequest({ model: context.model, ...body }, context);
  return { request, payload: JSON.parse(String(request.body)) };
}

async function buildError(body: Record<string, any>, context = ctx()): Promise<UpstreamError> {
  try {
    await chat.buildRequest({ model: context.model, ...body }, context);
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error("expected buildRequest to throw");
}

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("bedrock: Converse request", () => {
  it("moves system and developer messages to system and converts user text", async () => {
    const { payload } = await build({
      messages: [
        { role: "system", content: "You are terse." },
        { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
        { role: "user", content: "Hello" },
      ],
    });
    expect(payload).toEqual({
      system: [{ text: "You are terse." }, { text: "Answer in French." }],
      messages: [{ role: "user", content: [{ text: "Hello" }] }],
    });
  });

  it("maps inference parameters", async () => {
    const { payload } = await build({
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      stop: "END",
      seed: 7,
      frequency_penalty: 0.5,
    });
    expect(payload.inferenceConfig).toEqual({ maxTokens: 256, temperature: 0.2, topP: 0.9, stopSequences: ["END"] });
    expect(payload).not.toHaveProperty("seed");
    expect(payload).not.toHaveProperty("additionalModelRequestFields");
    const { payload: second } = await build({
      messages: [{ role: "user", content: "Hi" }],
      max_completion_tokens: 99,
      stop: ["a", "b"],
    });
    expect(second.inferenceConfig).toEqual({ maxTokens: 99, stopSequences: ["a", "b"] });
  });

  it("converts data-URL images and rejects http image URLs with a param", async () => {
    const { payload } = await build({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: "image_url", image_url: { url: `data:image/jpeg;base64,${PNG}` } },
          ],
        },
      ],
    });
    expect(payload.messages[0].content).toEqual([
      { text: "What is this?" },
      { image: { format: "png", source: { bytes: PNG } } },
      { image: { format: "jpeg", source: { bytes: PNG } } },
    ]);

    const error = await buildError({
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }],
    });
    expect(error.status).toBe(400);
    expect(error.param).toBe("messages[0].content[0].image_url.url");
    expect(error.message).toMatch(/data URL/);

    const tiff = await buildError({
      messages: [
        { role: "user", content: [{ type: "image_url", image_url: { url: `data:image/tiff;base64,${PNG}` } }] },
      ],
    });
    expect(tiff.status).toBe(400);
  });

  it("converts tool calls and tool results, merging consecutive same-role messages", async () => {
    const { payload } = await build({
      messages: [
        { role: "user", content: "Weather and time in Paris?" },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
            { id: "call_2", type: "function", function: { name: "get_time", arguments: "" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"temp": 21}' },
        { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "14:05" }] },
        { role: "user", content: "And tomorrow?" },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "Weather by city",
            parameters: { type: "object", properties: { city: { type: "string" } } },
          },
        },
        { type: "function", function: { name: "get_time" } },
      ],
    });
    expect(payload.messages).toEqual([
      { role: "user", content: [{ text: "Weather and time in Paris?" }] },
      {
        role: "assistant",
        content: [
          { text: "Checking." },
          { toolUse: { toolUseId: "call_1", name: "get_weather", input: { city: "Paris" } } },
          { toolUse: { toolUseId: "call_2", name: "get_time", input: {} } },
        ],
      },
      {
        role: "user",
        content: [
          { toolResult: { toolUseId: "call_1", content: [{ text: '{"temp": 21}' }] } },
          { toolResult: { toolUseId: "call_2", content: [{ text: "14:05" }] } },
          { text: "And tomorrow?" },
        ],
      },
    ]);
    expect(payload.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: "get_weather",
            description: "Weather by city",
            inputSchema: { json: { type: "object", properties: { city: { type: "string" } } } },
          },
        },
        { toolSpec: { name: "get_time", inputSchema: { json: { type: "object", properties: {} } } } },
      ],
    });
  });

  it("sends a non-string tool result as a json block and rejects invalid tool arguments", async () => {
    const { payload } = await build({
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c", content: { ok: true } },
      ],
      tools: [{ type: "function", function: { name: "f" } }],
    });
    expect(payload.messages[2].content[0].toolResult.content).toEqual([{ json: { ok: true } }]);

    const error = await buildError({
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{oops" } }] },
      ],
    });
    expect(error.param).toBe("messages[1].tool_calls[0].function.arguments");
  });

  it("maps tool_choice", async () => {
    const base = { messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "f" } }] };
    expect((await build({ ...base, tool_choice: "auto" })).payload.toolConfig.toolChoice).toEqual({ auto: {} });
    expect((await build({ ...base, tool_choice: "required" })).payload.toolConfig.toolChoice).toEqual({ any: {} });
    expect(
      (await build({ ...base, tool_choice: { type: "function", function: { name: "f" } } })).payload.toolConfig
        .toolChoice,
    ).toEqual({
      tool: { name: "f" },
    });
    expect((await build(base)).payload.toolConfig).not.toHaveProperty("toolChoice");
    // "none": no toolConfig at all...
    expect((await build({ ...base, tool_choice: "none" })).payload).not.toHaveProperty("toolConfig");
  });

  it("keeps a toolConfig whenever the history has tool blocks", async () => {
    const history = [
      { role: "user", content: "x" },
      { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "lookup", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c", content: "42" },
    ];
    // ...but with tool blocks in the history, Bedrock requires toolConfig: tools without a choice.
    const none = await build({
      messages: history,
      tools: [{ type: "function", function: { name: "lookup" } }],
      tool_choice: "none",
    });
    expect(none.payload.toolConfig.tools).toHaveLength(1);
    expect(none.payload.toolConfig).not.toHaveProperty("toolChoice");
    // No tools at all: placeholder specs for the names used in the history.
    const bare = await build({ messages: history });
    expect(bare.payload.toolConfig.tools).toEqual([
      {
        toolSpec: { name: "lookup", description: expect.any(String), inputSchema: { json: { type: "object" } } },
      },
    ]);
  });

  it("passes thinking and top_k as model-specific fields, json_schema as outputConfig", async () => {
    const { payload } = await build({
      messages: [{ role: "user", content: "17*23?" }],
      thinking: { type: "enabled", budget_tokens: 2048 },
      top_k: 40,
      response_format: {
        type: "json_schema",
        json_schema: { name: "answer", schema: { type: "object", properties: { n: { type: "integer" } } } },
      },
    });
    expect(payload.additionalModelRequestFields).toEqual({
      thinking: { type: "enabled", budget_tokens: 2048 },
      top_k: 40,
    });
    expect(payload.outputConfig).toEqual({
      textFormat: {
        type: "json_schema",
        structure: {
          jsonSchema: { name: "answer", schema: '{"type":"object","properties":{"n":{"type":"integer"}}}' },
        },
      },
    });
    const nova = await build(
      { messages: [{ role: "user", content: "x" }], top_k: 5 },
      ctx({ model: "amazon.nova-pro-v1:0" }),
    );
    expect(nova.payload.additionalModelRequestFields).toEqual({ inferenceConfig: { topK: 5 } });
  });

  it("turns cache_control parts into cache points", async () => {
    const { payload } = await build({
      messages: [
        { role: "system", content: [{ type: "text", text: "Long manual", cache_control: { type: "ephemeral" } }] },
        { role: "user", content: [{ type: "text", text: "Question", cache_control: { type: "ephemeral" } }] },
      ],
    });
    expect(payload.system).toEqual([{ text: "Long manual" }, { cachePoint: { type: "default" } }]);
    expect(payload.messages[0].content).toEqual([{ text: "Question" }, { cachePoint: { type: "default" } }]);
  });

  it("rejects n > 1 and unknown roles", async () => {
    expect((await buildError({ messages: [{ role: "user", content: "x" }], n: 2 })).param).toBe("n");
    expect((await buildError({ messages: [{ role: "function", content: "x" }] })).param).toBe("messages[0].role");
  });
});

describe("bedrock: URL and authentication", () => {
  it("builds regional URLs, stream and custom-host URLs, encoding ARNs", async () => {
    const messages = [{ role: "user", content: "x" }];
    expect((await build({ messages })).request.url).toBe(
      "https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
    );
    const noRegion = ctx({ target: { provider: "bedrock", aws: CREDENTIALS }, stream: true });
    expect((await build({ messages }, noRegion)).request.url).toBe(
      "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream",
    );
    const arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-7-sonnet-20250219-v1:0";
    const custom = ctx({
      model: arn,
      target: { provider: "bedrock", aws: CREDENTIALS, customHost: "http://127.0.0.1:9999/proxy/" },
    });
    expect((await build({ messages }, custom)).request.url).toBe(
      "http://127.0.0.1:9999/proxy/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse",
    );
    const embed = await embeddings.buildRequest(
      { model: "amazon.titan-embed-text-v2:0", input: "x" },
      ctx({ model: "amazon.titan-embed-text-v2:0", route: "embeddings" }),
    );
    expect(embed.url).toBe(
      "https://bedrock-runtime.eu-west-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke",
    );
  });

  it("signs with SigV4: header shape, signed headers, independently recomputed signature", async () => {
    const sessionToken = "IQoJb3JpZ2luX2VjEXAMPLETOKEN//with+special=chars";
    const context = ctx({
      target: {
        provider: "bedrock",
        aws: { ...CREDENTIALS, sessionToken, region: "eu-west-1" },
        forwardHeaders: { "X-Trace-Id": "abc" },
      },
    });
    const { request } = await build({ messages: [{ role: "user", content: "Héllo ✓" }] }, context);
    const auth = request.headers.authorization;
    const match =
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/(\d{8})\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
        auth,
      );
    expect(match, auth).not.toBeNull();
    const [, shortDate, signedList, signature] = match!;
    const signed = signedList.split(";");
    expect(signed).toEqual(
      expect.arrayContaining(["host", "x-amz-date", "x-amz-security-token", "content-type", "x-trace-id"]),
    );
    expect(request.headers["x-amz-security-token"]).toBe(sessionToken);
    expect(request.headers.host).toBe("bedrock-runtime.eu-west-1.amazonaws.com");
    const amzDate = request.headers["x-amz-date"];
    expect(amzDate).toMatch(/^\d{8}T\d{6}Z$/);
    expect(amzDate.startsWith(shortDate)).toBe(true);

    // Recompute independently: a fresh signer over the signed headers and the exact body bytes. The payload
    // hash header is left out so the signer hashes the bytes itself (and adds the header back, as it is signed).
    const url = new URL(request.url);
    const headers = Object.fromEntries(
      signed.filter((name) => name !== "x-amz-content-sha256").map((name) => [name, request.headers[name]]),
    );
    const signer = new SignatureV4({
      service: "bedrock",
      region: "eu-west-1",
      sha256: Sha256,
      credentials: { ...CREDENTIALS, sessionToken },
    });
    const signingDate = new Date(
      amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"),
    );
    const bytes = new TextEncoder().encode(String(request.body));
    const resign = async (body: Uint8Array) => {
      const again = await signer.sign(
        {
          method: "POST",
          protocol: url.protocol,
          hostname: url.hostname,
          path: url.pathname,
          query: {},
          headers: { ...headers },
          body,
        },
        { signingDate },
      );
      return /Signature=([0-9a-f]{64})/.exec(String(again.headers.authorization))?.[1];
    };
    expect(await resign(bytes)).toBe(signature);
    // Other bytes under the same headers give another signature: the body is covered by the signature.
    expect(await resign(new TextEncoder().encode(String(request.body).replace("Héllo", "Hello")))).not.toBe(signature);
    if (signed.includes("x-amz-content-sha256")) {
      expect(request.headers["x-amz-content-sha256"]).toBe(createHash("sha256").update(bytes).digest("hex"));
    }

    // The mock's checker agrees, given the same request as it would arrive.
    const check = await checkSigV4(
      { method: "POST", path: url.pathname, headers: request.headers, body: Buffer.from(bytes) },
      { ...CREDENTIALS, sessionToken },
    );
    expect(check).toMatchObject({ ok: true, region: "eu-west-1" });
  });

  it("uses a Bedrock API key as a bearer token without signing", async () => {
    const { request } = await build(
      { messages: [{ role: "user", content: "x" }] },
      ctx({ target: { provider: "bedrock", apiKey: "ABSKexample" } }),
    );
    expect(request.headers.authorization).toBe("Bearer ABSKexample");
    expect(request.headers).not.toHaveProperty("x-amz-date");
    expect(request.headers["content-type"]).toBe("application/json");
  });

  it("fails with 401 without credentials", async () => {
    const error = await buildError(
      { messages: [{ role: "user", content: "x" }] },
      ctx({ target: { provider: "bedrock" } }),
    );
    expect(error.status).toBe(401);
  });
});

describe("bedrock: Converse response", () => {
  it("converts a text answer", () => {
    expect(chat.transformResponse(readBedrockJson("converse-text.json"), ctx())).toEqual({
      id: "chatcmpl-test",
      object: "chat.completion",
      created: 1_700_000_000,
      model: CLAUDE,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Hello! How can I help you today?", refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 },
    });
  });

  it("converts tool use", () => {
    const out: any = chat.transformResponse(readBedrockJson("converse-tool-use.json"), ctx());
    expect(out.choices[0].finish_reason).toBe("tool_calls");
    expect(out.choices[0].message).toEqual({
      role: "assistant",
      content: "I'll look up the current weather in Paris.",
      refusal: null,
      tool_calls: [
        {
          id: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Paris","unit":"celsius"}' },
        },
      ],
    });
  });

  it("converts reasoning content", () => {
    const out: any = chat.transformResponse(readBedrockJson("converse-reasoning.json"), ctx());
    expect(out.choices[0].message.content).toBe("17 × 23 = 391.");
    expect(out.choices[0].message.reasoning_content).toMatch(/^The user asks for 17 \* 23/);
  });

  it("counts cache tokens in prompt_tokens", () => {
    const out: any = chat.transformResponse(readBedrockJson("converse-cache-usage.json"), ctx());
    expect(out.usage).toEqual({
      prompt_tokens: 2225,
      completion_tokens: 14,
      total_tokens: 2239,
      prompt_tokens_details: { cached_tokens: 2000, cache_creation_tokens: 200 },
    });
  });

  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["max_tokens", "length"],
    ["tool_use", "tool_calls"],
    ["guardrail_intervened", "content_filter"],
    ["content_filtered", "content_filter"],
  ])("maps stopReason %s to %s", (stopReason, finish) => {
    const out: any = chat.transformResponse({ ...readBedrockJson("converse-text.json"), stopReason }, ctx());
    expect(out.choices[0].finish_reason).toBe(finish);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Event stream: real binary frames, split at awkward places

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

async function* chunked(bytes: Uint8Array, sizes: (i: number) => number): AsyncGenerator<Uint8Array> {
  let offset = 0;
  for (let i = 0; offset < bytes.byteLength; i++) {
    const size = Math.max(1, sizes(i));
    yield bytes.slice(offset, offset + size);
    offset += size;
  }
}

async function decodeAll(source: AsyncIterable<Uint8Array>): Promise<UpstreamEvent[]> {
  const events: UpstreamEvent[] = [];
  for await (const event of decodeAwsEventStream(source)) events.push(event);
  return events;
}

function expectedEvents(fixture: BedrockStreamEvent[]): UpstreamEvent[] {
  return fixture.map((e) => ({
    event: e.event,
    messageType: e.messageType ?? "event",
    data: JSON.stringify(e.payload),
  }));
}

function runTransformer(events: UpstreamEvent[], context = ctx({ stream: true })): any[] {
  const transformer = chat.stream!.createTransformer(context);
  const out: any[] = [];
  for (const event of events) out.push(...transformer.push(event));
  out.push(...transformer.end());
  return out;
}

describe("aws-eventstream decoder", () => {
  const fixture = readBedrockStream("converse-stream-tool-use.json");
  const bytes = concatBytes(encodeBedrockStream(fixture));
  const expected = expectedEvents(fixture);

  it("decodes all frames from one chunk", async () => {
    expect(await decodeAll(chunked(bytes, () => bytes.byteLength))).toEqual(expected);
  });

  it("decodes frames delivered one byte at a time", async () => {
    expect(await decodeAll(chunked(bytes, () => 1))).toEqual(expected);
  });

  it("decodes for every two-chunk split position", async () => {
    for (let cut = 1; cut < bytes.byteLength; cut += 3) {
      const events = await decodeAll(chunked(bytes, (i) => (i === 0 ? cut : bytes.byteLength)));
      expect(events, `cut at ${cut}`).toEqual(expected);
    }
  });

  it("decodes with irregular chunk sizes (several frames per chunk, frames across chunks)", async () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 20; round++) {
      const events = await decodeAll(chunked(bytes, () => 1 + Math.floor(random() * 300)));
      expect(events).toEqual(expected);
    }
  });

  it("reports a stream cut inside a frame", async () => {
    const cut = bytes.slice(0, bytes.byteLength - 5);
    await expect(decodeAll(chunked(cut, () => 64))).rejects.toMatchObject({ status: 502, code: "bad_upstream_stream" });
  });

  it("rejects a frame with a bad checksum", () => {
    const corrupt = bytes.slice();
    corrupt[20] ^= 0xff;
    expect(() => new AwsEventStreamDecoder().push(corrupt)).toThrow(UpstreamError);
  });

  it("reads exception frames and generic error frames", () => {
    const exception = new AwsEventStreamDecoder().push(
      concatBytes(encodeBedrockStream(readBedrockStream("converse-stream-exception.json"))),
    );
    expect(exception[2]).toEqual({
      event: "throttlingException",
      messageType: "exception",
      data: JSON.stringify({ message: "Too many tokens, please wait before trying again." }),
    });
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const errorFrame = codec.encode({
      headers: {
        ":message-type": { type: "string", value: "error" },
        ":error-code": { type: "string", value: "InternalFailure" },
        ":error-message": { type: "string", value: "boom" },
      },
      body: new Uint8Array(0),
    });
    expect(new AwsEventStreamDecoder().push(errorFrame)).toEqual([
      { event: "InternalFailure", messageType: "error", data: JSON.stringify({ message: "boom" }) },
    ]);
  });
});

describe("bedrock: ConverseStream transformer", () => {
  it("streams text with a role chunk, finish chunk and a final usage chunk", async () => {
    const bytes = concatBytes(encodeBedrockStream(readBedrockStream("converse-stream-text.json")));
    const chunks = runTransformer(await decodeAll(chunked(bytes, (i) => [5, 13, 2, 200, 1][i % 5])));
    const base = { id: "chatcmpl-test", object: "chat.completion.chunk", created: 1_700_000_000, model: CLAUDE };
    const choice = (delta: object, finish_reason: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason }],
    });
    expect(chunks).toEqual([
      choice({ role: "assistant", content: "" }),
      choice({ content: "Hello" }),
      choice({ content: "! How can I" }),
      choice({ content: " help you today?" }),
      choice({}, "stop"),
      { ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 } },
    ]);
  });

  it("streams tool calls with indexes, ids, names and argument deltas", async () => {
    const events = await decodeAll(
      chunked(concatBytes(encodeBedrockStream(readBedrockStream("converse-stream-tool-use.json"))), () => 17),
    );
    const chunks = runTransformer(events);
    const deltas = chunks.filter((c) => c.choices.length).map((c) => c.choices[0].delta);
    expect(deltas).toContainEqual({
      tool_calls: [
        {
          index: 0,
          id: "tooluse_Zq3bXc8RT2mY4f1AbCdEfG",
          type: "function",
          function: { name: "get_weather", arguments: "" },
        },
      ],
    });
    expect(deltas).toContainEqual({
      tool_calls: [
        {
          index: 1,
          id: "tooluse_Ab12Cd34Ef56Gh78Ij90Kl",
          type: "function",
          function: { name: "get_time", arguments: "" },
        },
      ],
    });
    const args = (index: number) =>
      deltas
        .flatMap((d) => d.tool_calls ?? [])
        .filter((t: any) => t.index === index)
        .map((t: any) => t.function.arguments)
        .join("");
    expect(JSON.parse(args(0))).toEqual({ city: "Paris", unit: "celsius" });
    expect(JSON.parse(args(1))).toEqual({ timezone: "Europe/Paris" });
    expect(chunks.at(-2).choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 402, completion_tokens: 88, total_tokens: 490 });
  });

  it("streams reasoning_content and cache usage", async () => {
    const chunks = runTransformer(expectedEvents(readBedrockStream("converse-stream-reasoning.json")));
    const deltas = chunks.filter((c) => c.choices.length).map((c) => c.choices[0].delta);
    expect(deltas.map((d) => d.reasoning_content ?? "").join("")).toBe("17 * 20 = 340, 17 * 3 = 51, total 391.");
    expect(deltas.map((d) => d.content ?? "").join("")).toBe("17 × 23 = 391.");
    expect(chunks.at(-1).usage).toEqual({
      prompt_tokens: 2248,
      completion_tokens: 95,
      total_tokens: 2343,
      prompt_tokens_details: { cached_tokens: 2000, cache_creation_tokens: 200 },
    });
  });

  it("throws UpstreamError 429 on a throttlingException frame", async () => {
    const events = await decodeAll(
      chunked(concatBytes(encodeBedrockStream(readBedrockStream("converse-stream-exception.json"))), () => 9),
    );
    const transformer = chat.stream!.createTransformer(ctx({ stream: true }));
    expect(transformer.push(events[0])).toHaveLength(1);
    expect((transformer.push(events[1])[0] as any).choices[0].delta).toEqual({ content: "Once upon" });
    let thrown: unknown;
    try {
      transformer.push(events[2]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UpstreamError);
    expect(thrown).toMatchObject({
      status: 429,
      type: "rate_limit_error",
      code: "throttlingException",
      message: "Too many tokens, please wait before trying again.",
    });
    expect(transformer.end()).toEqual([]);
  });

  it.each([
    ["modelStreamErrorException", 424],
    ["validationException", 400],
    ["internalServerException", 500],
    ["serviceUnavailableException", 503],
  ])("maps %s to status %i", (name, status) => {
    const transformer = chat.stream!.createTransformer(ctx({ stream: true }));
    expect(() => transformer.push({ event: name, messageType: "exception", data: '{"message":"x"}' })).toThrow(
      expect.objectContaining({ status, code: name }),
    );
  });

  it("reports a stream that ends before messageStop", () => {
    const transformer = chat.stream!.createTransformer(ctx({ stream: true }));
    transformer.push({ event: "messageStart", messageType: "event", data: '{"role":"assistant"}' });
    expect(() => transformer.end()).toThrow(UpstreamError);
  });
});

describe("bedrock: embeddings", () => {
  const titan = "amazon.titan-embed-text-v2:0";
  const cohere = "cohere.embed-english-v3";
  const embedCtx = (model: string) => ctx({ model, route: "embeddings" });
  const payloadOf = async (body: Record<string, any>, model: string) =>
    JSON.parse(String((await embeddings.buildRequest({ model, ...body }, embedCtx(model))).body));

  it("builds Titan requests from one input", async () => {
    expect(await payloadOf({ input: "hello world", dimensions: 256, normalize: true }, titan)).toEqual({
      inputText: "hello world",
      dimensions: 256,
      normalize: true,
    });
    expect(await payloadOf({ input: ["only one"] }, titan)).toEqual({ inputText: "only one" });
    await expect(payloadOf({ input: ["a", "b"] }, titan)).rejects.toMatchObject({ status: 400, param: "input" });
  });

  it("builds Cohere requests with input_type defaulting to search_document", async () => {
    expect(await payloadOf({ input: ["a", "b"] }, cohere)).toEqual({
      texts: ["a", "b"],
      input_type: "search_document",
    });
    expect(await payloadOf({ input: "q", input_type: "search_query", truncate: "END" }, cohere)).toEqual({
      texts: ["q"],
      input_type: "search_query",
      truncate: "END",
    });
  });

  it("rejects other models and token-array inputs", async () => {
    await expect(payloadOf({ input: "x" }, "meta.llama3-8b-instruct-v1:0")).rejects.toMatchObject({
      status: 400,
      param: "model",
    });
    await expect(payloadOf({ input: [1, 2, 3] }, cohere)).rejects.toMatchObject({ status: 400, param: "input" });
  });

  it("converts Titan and Cohere responses", () => {
    const titanOut: any = embeddings.transformResponse(readBedrockJson("invoke-titan-embed-v2.json"), embedCtx(titan));
    expect(titanOut).toEqual({
      object: "list",
      data: [{ object: "embedding", index: 0, embedding: readBedrockJson("invoke-titan-embed-v2.json").embedding }],
      model: titan,
      usage: { prompt_tokens: 6, total_tokens: 6 },
    });
    const cohereOut: any = embeddings.transformResponse(readBedrockJson("invoke-cohere-embed.json"), embedCtx(cohere));
    expect(cohereOut.data.map((d: any) => d.index)).toEqual([0, 1]);
    expect(cohereOut.data[1].embedding).toEqual(readBedrockJson("invoke-cohere-embed.json").embeddings[1]);
    // "the quick brown fox" (19 chars) and "jumps over the lazy dog" (23 chars) at ~4 chars per token.
    expect(cohereOut.usage).toEqual({ prompt_tokens: 5 + 6, total_tokens: 11 });
  });

  it("answers base64 when the request asked for it", async () => {
    const context = embedCtx(titan);
    await embeddings.buildRequest({ model: titan, input: "x", encoding_format: "base64" }, context);
    const out: any = embeddings.transformResponse(readBedrockJson("invoke-titan-embed-v2.json"), context);
    const decoded = Array.from(new Float32Array(new Uint8Array(Buffer.from(out.data[0].embedding, "base64")).buffer));
    expect(decoded).toEqual(Array.from(new Float32Array(readBedrockJson("invoke-titan-embed-v2.json").embedding)));
  });
});

describe("bedrock: errors", () => {
  it("maps AWS JSON errors with stable codes", () => {
    const validation = readBedrockJson("error-validation.json");
    expect(bedrockAdapter.mapError!(400, JSON.stringify(validation.body))).toEqual({
      message: validation.body.message,
      type: "invalid_request_error",
      code: "validation_exception",
      param: null,
    });
    expect(bedrockAdapter.mapError!(429, JSON.stringify(readBedrockJson("error-throttling.json").body))).toMatchObject({
      type: "rate_limit_error",
      code: "throttling_exception",
    });
    expect(bedrockAdapter.mapError!(400, '{"message":"Input is too long for requested model."}').code).toBe(
      "context_length_exceeded",
    );
    expect(
      bedrockAdapter.mapError!(
        403,
        '{"Message":"User is not authorized","__type":"com.amazon.coral#AccessDeniedException"}',
      ),
    ).toMatchObject({
      message: "User is not authorized",
      type: "permission_error",
      code: "access_denied_exception",
    });
  });
});

describe("bedrock: against the mock runtime over HTTP", () => {
  let mock: BedrockMock;
  beforeAll(async () => {
    mock = await startBedrockMock({ credentials: CREDENTIALS });
  });
  afterAll(() => mock.close());

  const mockCtx = (overrides: Partial<TransformContext> = {}) =>
    ctx({
      target: { provider: "bedrock", aws: { ...CREDENTIALS, region: "us-west-2" }, customHost: mock.url },
      ...overrides,
    });

  const send = (request: UpstreamRequest) =>
    fetch(request.url, { method: request.method, headers: request.headers, body: request.body as string });

  it("accepts the signed Converse request and answers JSON", async () => {
    mock.setScenario("auto");
    const context = mockCtx();
    const request = await chat.buildRequest({ model: CLAUDE, messages: [{ role: "user", content: "Hi ✓" }] }, context);
    const response = await send(request);
    expect(response.status).toBe(200);
    const out: any = chat.transformResponse(await response.json(), context);
    expect(out.choices[0].message.content).toBe("Hello! How can I help you today?");
  });

  it("rejects a bad signature with 403", async () => {
    const context = mockCtx({
      target: { provider: "bedrock", aws: { ...CREDENTIALS, secretAccessKey: "wrong" }, customHost: mock.url },
    });
    const response = await send(
      await chat.buildRequest({ model: CLAUDE, messages: [{ role: "user", content: "Hi" }] }, context),
    );
    expect(response.status).toBe(403);
    expect(response.headers.get("x-amzn-errortype")).toMatch(/^InvalidSignatureException/);
    const unsigned = await fetch(`${mock.url}/model/x/converse`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(unsigned.status).toBe(403);
  });

  it("streams real event-stream frames through the decoder and transformer", async () => {
    const context = mockCtx({ stream: true });
    const request = await chat.buildRequest(
      {
        model: CLAUDE,
        stream: true,
        messages: [{ role: "user", content: "Weather?" }],
        tools: [{ type: "function", function: { name: "get_weather" } }],
      },
      context,
    );
    const response = await send(request);
    expect(response.headers.get("content-type")).toBe("application/vnd.amazon.eventstream");
    const events = await decodeAll(response.body as unknown as AsyncIterable<Uint8Array>);
    const chunks = runTransformer(events, context);
    expect(chunks.at(-2).choices[0].finish_reason).toBe("tool_calls");
  });

  it("embeds through /invoke", async () => {
    const context = mockCtx({ model: "cohere.embed-multilingual-v3", route: "embeddings" });
    const response = await send(
      await embeddings.buildRequest({ model: context.model, input: ["a", "b", "c"] }, context),
    );
    const out: any = embeddings.transformResponse(await response.json(), context);
    expect(out.data).toHaveLength(3);
  });
});
