import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { createMessageAssembler } from "../../../core/inference/formats/messages/assembler.ts";
import type { TypedEvent } from "../../../core/providers/types.ts";
import { bedrockAdapter } from "../../../core/providers/bedrock/index.ts";
import { isBedrockAnthropicModel } from "../../../core/providers/bedrock/invoke-messages.ts";
import { AwsEventStreamDecoder } from "../../../core/providers/stream/aws-eventstream.ts";
import { type TransformContext, UpstreamError } from "../../../core/providers/types.ts";
import { checkSigV4, encodeBedrockStream, readBedrockJson, readBedrockStream } from "../../mocks/bedrock.ts";

const CLAUDE = "anthropic.claude-sonnet-4-5-20250929-v1:0";
const CREDENTIALS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };

function ctx(overrides: Partial<TransformContext> = {}): TransformContext {
  return {
    target: { provider: "bedrock", aws: { ...CREDENTIALS, region: "eu-west-1" } },
    route: "messages",
    stream: false,
    model: CLAUDE,
    now: 1_700_000_000,
    requestId: "req-bedrock",
    includeUsage: false,
    ...overrides,
  };
}

const route = bedrockAdapter.routes.messages!;
const body = {
  model: CLAUDE,
  max_tokens: 512,
  system: "Be brief.",
  messages: [{ role: "user", content: "Weather in Paris?" }],
  tools: [{ name: "get_weather", input_schema: { type: "object", properties: {} } }],
  stream: true,
};

/** A fixture's events as Bedrock sends them: binary event-stream frames, decoded as the pipeline decodes them. */
function framed(name: string) {
  const decoder = new AwsEventStreamDecoder();
  return [...encodeBedrockStream(readBedrockStream(name)).flatMap((bytes) => decoder.push(bytes)), ...decoder.end()];
}

describe("bedrock: native messages route (InvokeModel)", () => {
  it.each([
    ["anthropic.claude-3-5-sonnet-20240620-v1:0", true],
    ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", true],
    ["global.anthropic.claude-haiku-4-5-20251001-v1:0", true],
    ["arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-opus-4-1-20250805-v1:0", true],
    ["arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0", true],
    ["amazon.nova-pro-v1:0", false],
    ["meta.llama3-70b-instruct-v1:0", false],
    ["arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123", false],
  ])("supportsModel(%s) is %s", (model, native) => {
    expect(route.supportsModel?.(model)).toBe(native);
    expect(isBedrockAnthropicModel(model)).toBe(native);
  });

  it("posts to /invoke, signed, with anthropic_version and without model or stream", async () => {
    const request = await route.buildRequest(body, ctx());
    expect(request.url).toBe(
      "https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke",
    );
    const { model: _model, stream: _stream, ...rest } = body;
    expect(JSON.parse(String(request.body))).toEqual({ anthropic_version: "bedrock-2023-05-31", ...rest });
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\//,
    );
    const url = new URL(request.url);
    const check = await checkSigV4(
      { method: "POST", path: url.pathname, headers: request.headers, body: Buffer.from(String(request.body)) },
      CREDENTIALS,
    );
    expect(check).toMatchObject({ ok: true, region: "eu-west-1" });
  });

  it("streams through /invoke-with-response-stream and moves anthropic-beta into the body", async () => {
    const request = await route.buildRequest(
      body,
      ctx({
        stream: true,
        model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        target: {
          provider: "bedrock",
          apiKey: "ABSKexample",
          forwardHeaders: { "anthropic-beta": "interleaved-thinking-2025-05-14, context-1m-2025-08-07" },
        },
      }),
    );
    expect(request.url).toBe(
      "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream",
    );
    expect(request.headers.authorization).toBe("Bearer ABSKexample");
    expect(request.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14, context-1m-2025-08-07");
    const payload = JSON.parse(String(request.body));
    expect(payload.anthropic_beta).toEqual(["interleaved-thinking-2025-05-14", "context-1m-2025-08-07"]);
    expect(payload.stream).toBeUndefined();
    expect(payload.model).toBeUndefined();
  });

  it("returns the Message of InvokeModel as it is", () => {
    const message = readBedrockJson("invoke-messages-text.json");
    expect(route.transformResponse(message, ctx())).toEqual(readBedrockJson("invoke-messages-text.json"));
    expect(() =>
      route.transformResponse({ type: "error", error: { type: "overloaded_error", message: "Busy" } }, ctx()),
    ).toThrow(UpstreamError);
  });

  it("unwraps the base64 chunk events into Anthropic's events, without Bedrock's metrics", () => {
    expect(route.stream?.framing).toBe("aws-eventstream");
    const transformer = route.stream!.createTransformer(ctx({ stream: true }));
    const events = [
      ...framed("invoke-stream-messages-tool-use.json").flatMap((e) => transformer.push(e)),
      ...transformer.end(),
    ] as TypedEvent[];
    const expected = readBedrockStream("invoke-stream-messages-tool-use.json").map((entry: any) =>
      JSON.parse(Buffer.from(entry.payload.bytes, "base64").toString("utf8")),
    );
    expect(expected.at(-1)).toHaveProperty("amazon-bedrock-invocationMetrics");
    expect(events).toEqual([...expected.slice(0, -1), { type: "message_stop" }]);

    const assembler = createMessageAssembler();
    for (const event of events) assembler.add(event);
    expect(assembler.result()).toMatchObject({
      id: "msg_bdrk_01Tool",
      stop_reason: "tool_use",
      content: [
        { type: "text", text: "Let me check the weather." },
        { type: "tool_use", id: "toolu_bdrk_01Weather", name: "get_weather", input: { location: "Paris" } },
      ],
    });
    expect(assembler.usage()).toMatchObject({ prompt_tokens: 472, completion_tokens: 58 });
  });

  it("throws the stream's exception with its status", () => {
    const transformer = route.stream!.createTransformer(ctx({ stream: true }));
    const [first, second, third, exception] = framed("invoke-stream-messages-exception.json");
    expect([first!, second!, third!].flatMap((event) => transformer.push(event))).toHaveLength(3);
    let error: unknown;
    try {
      transformer.push(exception!);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 429, code: "throttlingException" });
    expect(transformer.end()).toEqual([]);
  });

  it("refuses a chunk without bytes and a stream cut before message_stop", () => {
    const bad = route.stream!.createTransformer(ctx({ stream: true }));
    expect(() => bad.push({ event: "chunk", messageType: "event", data: "{}" })).toThrow(/without bytes/);
    const cut = route.stream!.createTransformer(ctx({ stream: true }));
    for (const event of framed("invoke-stream-messages-tool-use.json").slice(0, 3)) cut.push(event);
    expect(() => cut.end()).toThrow(/before message_stop/);
  });
});
