import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createGeminiStreamTransformer,
  fromGeminiResponse,
  toChatUsage,
  toGeminiRequest,
  UNKNOWN_THOUGHT_SIGNATURE,
} from "../../../core/providers/google/chat.ts";
import { googleAdapter } from "../../../core/providers/google/index.ts";
import { toGeminiSchema } from "../../../core/providers/google/schema.ts";
import { loadProvider } from "../../../core/providers/registry.ts";
import { decodeSse } from "../../../core/providers/stream/sse.ts";
import { type TransformContext, UpstreamError } from "../../../core/providers/types.ts";
import type { MockServer } from "../../helpers/mock-server.ts";
import { startGoogleMock } from "../../mocks/google.ts";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/google/${name}`, import.meta.url), "utf8"));

function context(overrides: Partial<TransformContext> = {}): TransformContext {
  return {
    target: { provider: "google", apiKey: "test-key" },
    route: "chat",
    stream: false,
    model: "gemini-2.5-flash",
    now: 1_700_000_000,
    requestId: "chatcmpl-test",
    includeUsage: false,
    ...overrides,
  };
}

const chat = googleAdapter.routes.chat!;

async function build(body: Record<string, any>, ctx = context()) {
  const request = await chat.buildRequest(body, ctx);
  return { request, payload: JSON.parse(String(request.body)) };
}

function runStream(events: unknown[], ctx = context({ stream: true })): any[] {
  const transformer = createGeminiStreamTransformer(ctx);
  const chunks = events.flatMap((event) => transformer.push({ data: JSON.stringify(event) }));
  return [...chunks, ...transformer.end()] as any[];
}

describe("google adapter registration and URLs", () => {
  it("is registered under google", async () => {
    expect(await loadProvider("google")).toBe(googleAdapter);
  });

  it("posts generateContent to the default host with the key in x-goog-api-key", async () => {
    const { request } = await build({ messages: [{ role: "user", content: "Hi" }] });
    expect(request.url).toBe(
      "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
    );
    expect(request.method).toBe("POST");
    expect(request.headers["x-goog-api-key"]).toBe("test-key");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers.authorization).toBeUndefined();
  });

  it("streams with streamGenerateContent?alt=sse and honours a custom host", async () => {
    const ctx = context({
      stream: true,
      target: { provider: "google", apiKey: "k", customHost: "http://127.0.0.1:9999/" },
    });
    const { request } = await build({ messages: [{ role: "user", content: "Hi" }] }, ctx);
    expect(request.url).toBe("http://127.0.0.1:9999/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(chat.stream?.framing).toBe("sse");
  });

  it("does not double a version segment already in the custom host, and accepts models/ prefixes", async () => {
    const ctx = context({
      model: "models/gemini-2.0-flash",
      target: { provider: "google", customHost: "https://proxy.example/v1beta" },
    });
    const { request } = await build({ messages: [{ role: "user", content: "Hi" }] }, ctx);
    expect(request.url).toBe("https://proxy.example/v1beta/models/gemini-2.0-flash:generateContent");
    expect(request.headers["x-goog-api-key"]).toBeUndefined();
  });

  it("rejects model names that would walk the path", () => {
    expect(() => chat.buildRequest({ messages: [] }, context({ model: "../files/x" }))).toThrow(UpstreamError);
  });

  it("passes forwarded headers through", async () => {
    const ctx = context({ target: { provider: "google", apiKey: "k", forwardHeaders: { "x-trace": "abc" } } });
    const { request } = await build({ messages: [{ role: "user", content: "Hi" }] }, ctx);
    expect(request.headers["x-trace"]).toBe("abc");
  });
});

describe("chat request transform", () => {
  it("moves system and developer messages to systemInstruction and merges same-role turns", () => {
    const payload = toGeminiRequest(
      {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
          { role: "user", content: "Hello" },
          { role: "user", content: [{ type: "text", text: "Are you there?" }] },
          { role: "assistant", content: "Oui." },
          { role: "user", content: "Merci" },
        ],
      },
      "gemini-2.5-flash",
    );
    expect(payload.systemInstruction).toEqual({ parts: [{ text: "Be brief." }, { text: "Answer in French." }] });
    expect(payload.contents).toEqual([
      { role: "user", parts: [{ text: "Hello" }, { text: "Are you there?" }] },
      { role: "model", parts: [{ text: "Oui." }] },
      { role: "user", parts: [{ text: "Merci" }] },
    ]);
    expect(payload.generationConfig).toBeUndefined();
    expect(payload.model).toBeUndefined();
  });

  it("turns data: image URLs into inlineData and http URLs into fileData", () => {
    const payload = toGeminiRequest(
      {
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Compare" },
              { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
              { type: "image_url", image_url: { url: "https://example.com/cat.webp?size=large" } },
              { type: "image_url", image_url: { url: "https://example.com/render" } },
              { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
              { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } },
            ],
          },
        ],
      },
      "gemini-2.5-flash",
    );
    expect(payload.contents[0].parts).toEqual([
      { text: "Compare" },
      { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
      { fileData: { mimeType: "image/webp", fileUri: "https://example.com/cat.webp?size=large" } },
      { fileData: { mimeType: "image/jpeg", fileUri: "https://example.com/render" } },
      { inlineData: { mimeType: "audio/wav", data: "UklGRg==" } },
      { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } },
    ]);
  });

  it("maps assistant tool calls to functionCall parts and tool results to functionResponse parts", () => {
    const payload = toGeminiRequest(
      {
        messages: [
          { role: "user", content: "Weather and time in Paris?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
              { id: "call_b", type: "function", function: { name: "get_time", arguments: "" } },
            ],
          },
          { role: "tool", tool_call_id: "call_a", content: '{"temp":21,"sky":"clear"}' },
          { role: "tool", tool_call_id: "call_b", content: "14:05" },
          { role: "tool", tool_call_id: "call_a", content: "[1,2]" },
        ],
      },
      "gemini-2.5-flash",
    );
    expect(payload.contents[1]).toEqual({
      role: "model",
      parts: [
        { functionCall: { name: "get_weather", args: { city: "Paris" } } },
        { functionCall: { name: "get_time", args: {} } },
      ],
    });
    expect(payload.contents[2]).toEqual({
      role: "user",
      parts: [
        { functionResponse: { name: "get_weather", response: { temp: 21, sky: "clear" } } },
        { functionResponse: { name: "get_time", response: { content: "14:05" } } },
        { functionResponse: { name: "get_weather", response: { content: [1, 2] } } },
      ],
    });
  });

  it("echoes thought signatures, and puts the documented placeholder on Gemini 3 turns that lack one", () => {
    const messages = [
      { role: "user", content: "Go" },
      {
        role: "assistant",
        tool_calls: [
          {
            id: "c1",
            type: "function",
            function: { name: "f", arguments: "{}" },
            extra_content: { google: { thought_signature: "c2lnbmF0dXJl" } },
          },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "ok" },
      {
        role: "assistant",
        tool_calls: [
          { id: "c2", type: "function", function: { name: "f", arguments: "{}" } },
          { id: "c3", type: "function", function: { name: "f", arguments: "{}" } },
        ],
      },
    ];
    const gemini3 = toGeminiRequest({ messages }, "gemini-3-pro-preview");
    expect(gemini3.contents[1].parts[0].thoughtSignature).toBe("c2lnbmF0dXJl");
    expect(gemini3.contents[3].parts[0].thoughtSignature).toBe(UNKNOWN_THOUGHT_SIGNATURE);
    expect(gemini3.contents[3].parts[1].thoughtSignature).toBeUndefined();

    const gemini25 = toGeminiRequest({ messages }, "gemini-2.5-flash");
    expect(gemini25.contents[1].parts[0].thoughtSignature).toBe("c2lnbmF0dXJl");
    expect(gemini25.contents[3].parts[0].thoughtSignature).toBeUndefined();
  });

  it("rejects a tool message whose call id matches no earlier tool call", () => {
    expect(() =>
      toGeminiRequest({ messages: [{ role: "tool", tool_call_id: "nope", content: "x" }] }, "gemini-2.5-flash"),
    ).toThrow(/nope/);
  });

  it("declares tools with schemas Gemini accepts and maps tool_choice", () => {
    const tools = [
      {
        type: "function",
        function: {
          name: "search",
          description: "Search the web",
          strict: true,
          parameters: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            additionalProperties: false,
            properties: {
              query: { type: "string", format: "uri-reference", minLength: 1 },
              limit: { type: ["integer", "null"] },
              filters: { $ref: "#/$defs/Filters" },
            },
            required: ["query", "limit", "filters"],
            $defs: {
              Filters: {
                type: "object",
                additionalProperties: false,
                properties: { site: { anyOf: [{ type: "string" }, { type: "null" }], description: "Domain" } },
                required: ["site"],
              },
            },
          },
        },
      },
      { type: "function", function: { name: "now", parameters: { type: "object", properties: {} } } },
    ];
    const payload = toGeminiRequest(
      { messages: [{ role: "user", content: "x" }], tools, tool_choice: "required" },
      "m",
    );
    expect(payload.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: "search",
            description: "Search the web",
            parameters: {
              type: "object",
              properties: {
                query: { type: "string", minLength: 1 },
                limit: { type: "integer", nullable: true },
                filters: {
                  type: "object",
                  properties: { site: { type: "string", nullable: true, description: "Domain" } },
                  required: ["site"],
                },
              },
              required: ["query", "limit", "filters"],
            },
          },
          { name: "now" },
        ],
      },
    ]);
    expect(payload.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY" } });

    const named = toGeminiRequest(
      { messages: [], tools, tool_choice: { type: "function", function: { name: "search" } } },
      "m",
    );
    expect(named.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["search"] } });
    expect(toGeminiRequest({ messages: [], tools, tool_choice: "none" }, "m").toolConfig).toEqual({
      functionCallingConfig: { mode: "NONE" },
    });
    expect(toGeminiRequest({ messages: [], tools, tool_choice: "auto" }, "m").toolConfig).toEqual({
      functionCallingConfig: { mode: "AUTO" },
    });
    expect(toGeminiRequest({ messages: [], tool_choice: "auto" }, "m").toolConfig).toBeUndefined();
  });

  it("maps sampling, limits, penalties, logprobs and thinking into generationConfig", () => {
    const payload = toGeminiRequest(
      {
        messages: [{ role: "user", content: "x" }],
        temperature: 0.3,
        top_p: 0.9,
        max_tokens: 100,
        max_completion_tokens: 200,
        stop: "END",
        n: 2,
        seed: 7,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        logprobs: true,
        top_logprobs: 3,
        thinking: { type: "enabled", budget_tokens: 2048 },
      },
      "gemini-2.5-pro",
    );
    expect(payload.generationConfig).toEqual({
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 200,
      stopSequences: ["END"],
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      responseLogprobs: true,
      logprobs: 3,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
    });
    const effort = toGeminiRequest({ messages: [], reasoning_effort: "low", stop: ["a", "b"] }, "m");
    expect(effort.generationConfig).toEqual({ stopSequences: ["a", "b"], thinkingConfig: { thinkingBudget: 1024 } });
    expect(toGeminiRequest({ messages: [], thinking: { type: "disabled" } }, "m").generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 0 },
    });
  });

  it("maps response_format json_object and json_schema", () => {
    expect(toGeminiRequest({ messages: [], response_format: { type: "json_object" } }, "m").generationConfig).toEqual({
      responseMimeType: "application/json",
    });
    const schema = {
      type: "object",
      additionalProperties: false,
      properties: { answer: { type: "string" }, kind: { const: "final" }, rank: { enum: [1, 2] } },
      required: ["answer", "kind"],
    };
    const payload = toGeminiRequest(
      { messages: [], response_format: { type: "json_schema", json_schema: { name: "out", strict: true, schema } } },
      "m",
    );
    expect(payload.generationConfig).toEqual({
      responseMimeType: "application/json",
      responseSchema: {
        type: "object",
        properties: {
          answer: { type: "string" },
          kind: { type: "string", enum: ["final"] },
          rank: { type: "string", enum: ["1", "2"] },
        },
        required: ["answer", "kind"],
      },
    });
  });

  it("passes Gemini-native safety settings and cached content through", () => {
    const safetySettings = [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }];
    const payload = toGeminiRequest(
      { messages: [], safety_settings: safetySettings, cached_content: "cachedContents/abc" },
      "m",
    );
    expect(payload.safetySettings).toEqual(safetySettings);
    expect(payload.cachedContent).toBe("cachedContents/abc");
  });
});

describe("schema conversion", () => {
  it("merges allOf, turns oneOf into anyOf and cuts recursive refs", () => {
    const converted = toGeminiSchema({
      type: "object",
      properties: {
        node: { $ref: "#/definitions/Node" },
        pick: { oneOf: [{ type: "string" }, { type: "number" }] },
        both: {
          allOf: [{ type: "object", properties: { a: { type: "string" } } }, { properties: { b: { type: "number" } } }],
        },
      },
      definitions: { Node: { type: "object", properties: { child: { $ref: "#/definitions/Node" } } } },
    });
    expect(converted.properties.pick).toEqual({ anyOf: [{ type: "string" }, { type: "number" }] });
    expect(converted.properties.both).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "number" } },
    });
    let depth = 0;
    let node = converted.properties.node;
    while (node?.properties?.child) {
      node = node.properties.child;
      depth++;
    }
    expect(depth).toBeGreaterThan(3);
    expect(depth).toBeLessThan(12);
    expect(JSON.stringify(converted)).not.toMatch(/\$ref|definitions/);
  });

  it("keeps a property literally named like a dropped keyword", () => {
    const converted = toGeminiSchema({
      type: "object",
      properties: { additionalProperties: { type: "boolean" } },
      required: ["additionalProperties", "missing"],
    });
    expect(converted).toEqual({
      type: "object",
      properties: { additionalProperties: { type: "boolean" } },
      required: ["additionalProperties"],
    });
  });
});

describe("chat response transform", () => {
  it("joins text parts and maps usage", () => {
    const completion: any = fromGeminiResponse(fixture("generate-content-text.json"), context());
    expect(completion).toEqual({
      id: "resp-text-01",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "gemini-2.5-flash",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "The capital of France is Paris.", refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: { prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 },
    });
  });

  it("maps function calls to tool_calls with generated ids and the thought signature", () => {
    const completion: any = chat.transformResponse(fixture("generate-content-function-call.json"), context());
    const choice = completion.choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      {
        id: "call_0",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Paris","unit":"celsius"}' },
        extra_content: { google: { thought_signature: "c2lnbmF0dXJlLWZvci1maXJzdC1jYWxs" } },
      },
      { id: "call_1", type: "function", function: { name: "get_time", arguments: '{"timezone":"Europe/Paris"}' } },
    ]);
  });

  it("round-trips a tool call answer into the next request", () => {
    const completion: any = chat.transformResponse(fixture("generate-content-function-call.json"), context());
    const next = toGeminiRequest(
      {
        messages: [
          { role: "user", content: "?" },
          completion.choices[0].message,
          { role: "tool", tool_call_id: "call_0", content: "{}" },
          { role: "tool", tool_call_id: "call_1", content: "{}" },
        ],
      },
      "gemini-3-pro-preview",
    );
    expect(next.contents[1].parts[0]).toEqual({
      functionCall: { name: "get_weather", args: { city: "Paris", unit: "celsius" } },
      thoughtSignature: "c2lnbmF0dXJlLWZvci1maXJzdC1jYWxs",
    });
    expect(next.contents[2].parts.map((part: any) => part.functionResponse.name)).toEqual(["get_weather", "get_time"]);
  });

  it("answers a prompt blocked by promptFeedback with a content_filter choice", () => {
    const completion: any = fromGeminiResponse(fixture("generate-content-prompt-blocked.json"), context());
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: { role: "assistant", content: null, refusal: null },
        logprobs: null,
        finish_reason: "content_filter",
      },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 11, completion_tokens: 0, total_tokens: 11 });
  });

  it("maps a candidate stopped for safety to content_filter with null content", () => {
    const completion: any = fromGeminiResponse(fixture("generate-content-candidate-safety.json"), context());
    expect(completion.choices[0].finish_reason).toBe("content_filter");
    expect(completion.choices[0].message.content).toBeNull();
  });

  it("splits thoughts into reasoning_content and reports reasoning and cached tokens", () => {
    const completion: any = fromGeminiResponse(fixture("generate-content-thinking-cached.json"), context());
    expect(completion.choices[0].message.reasoning_content).toMatch(/^The user wants a short proof/);
    expect(completion.choices[0].message.content).toMatch(/^Assume sqrt\(2\)/);
    expect(completion.usage).toEqual({
      prompt_tokens: 1200,
      completion_tokens: 335,
      total_tokens: 1535,
      prompt_tokens_details: { cached_tokens: 1024 },
      completion_tokens_details: { reasoning_tokens: 310 },
    });
  });

  it("maps MAX_TOKENS to length for every candidate", () => {
    const completion: any = fromGeminiResponse(fixture("generate-content-max-tokens.json"), context());
    expect(completion.choices.map((choice: any) => [choice.index, choice.finish_reason])).toEqual([
      [0, "length"],
      [1, "length"],
    ]);
  });

  it("maps logprobs", () => {
    const completion: any = fromGeminiResponse(
      {
        candidates: [
          {
            content: { parts: [{ text: "Hi" }] },
            finishReason: "STOP",
            logprobsResult: {
              topCandidates: [
                {
                  candidates: [
                    { token: "Hi", logProbability: -0.1 },
                    { token: "Hey", logProbability: -2.5 },
                  ],
                },
              ],
              chosenCandidates: [{ token: "Hi", logProbability: -0.1 }],
            },
          },
        ],
      },
      context(),
    );
    expect(completion.id).toBe("chatcmpl-test");
    expect(completion.choices[0].logprobs).toEqual({
      content: [
        {
          token: "Hi",
          logprob: -0.1,
          bytes: [72, 105],
          top_logprobs: [
            { token: "Hi", logprob: -0.1, bytes: [72, 105] },
            { token: "Hey", logprob: -2.5, bytes: [72, 101, 121] },
          ],
        },
      ],
    });
  });

  it("throws UpstreamError for a Google error body", () => {
    try {
      fromGeminiResponse(fixture("error-invalid-argument.json"), context());
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).status).toBe(400);
      expect((error as UpstreamError).message).toMatch(/contents is not specified/);
    }
  });

  it("reads audio and image tokens from the modality details, so they are priced at their own rates", () => {
    expect(
      toChatUsage({
        promptTokenCount: 120,
        candidatesTokenCount: 40,
        thoughtsTokenCount: 10,
        cachedContentTokenCount: 20,
        promptTokensDetails: [
          { modality: "TEXT", tokenCount: 20 },
          { modality: "AUDIO", tokenCount: 90 },
          { modality: "IMAGE", tokenCount: 10 },
        ],
        candidatesTokensDetails: [{ modality: "AUDIO", tokenCount: 30 }],
      }),
    ).toEqual({
      prompt_tokens: 120,
      completion_tokens: 50,
      total_tokens: 170,
      prompt_tokens_details: { cached_tokens: 20, audio_tokens: 90, image_tokens: 10 },
      completion_tokens_details: { reasoning_tokens: 10, audio_tokens: 30 },
    });
  });

  it("counts tool-use prompt tokens as prompt tokens", () => {
    expect(toChatUsage({ promptTokenCount: 10, toolUsePromptTokenCount: 5, candidatesTokenCount: 3 })).toEqual({
      prompt_tokens: 15,
      completion_tokens: 3,
      total_tokens: 18,
    });
  });
});

describe("stream transform", () => {
  it("emits a role chunk, text deltas, a finish chunk and a final usage chunk", () => {
    const chunks = runStream(fixture("stream-text.json"));
    expect(chunks[0]).toEqual({
      id: "resp-stream-01",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "gemini-2.5-flash",
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }],
    });
    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");
    expect(text).toBe("Hello, how can I help?");
    const finishes = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finishes).toHaveLength(1);
    expect(finishes[0].choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: "stop" });
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 });
    expect(chunks.indexOf(finishes[0])).toBe(chunks.length - 2);
  });

  it("streams thoughts as reasoning_content and function calls as complete tool calls", () => {
    const chunks = runStream(fixture("stream-thinking-tools.json"));
    const deltas = chunks.filter((chunk) => chunk.choices.length > 0).map((chunk) => chunk.choices[0].delta);
    expect(deltas[1]).toEqual({ reasoning_content: "I should look up the weather." });
    expect(deltas[2].tool_calls).toEqual([
      {
        index: 0,
        id: "call_0",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
        extra_content: { google: { thought_signature: "c2ln" } },
      },
      { index: 1, id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Bergen"}' } },
    ]);
    expect(chunks.at(-2).choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.at(-1).usage).toEqual({
      prompt_tokens: 40,
      completion_tokens: 32,
      total_tokens: 72,
      completion_tokens_details: { reasoning_tokens: 12 },
    });
  });

  it("throws UpstreamError for an error object inside the stream", () => {
    const transformer = createGeminiStreamTransformer(context({ stream: true }));
    const [first, second] = fixture("stream-error.json");
    expect(transformer.push({ data: JSON.stringify(first) }).length).toBe(2);
    try {
      transformer.push({ data: JSON.stringify(second) });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).status).toBe(429);
      expect((error as UpstreamError).type).toBe("rate_limit_error");
    }
  });

  it("finishes a blocked prompt with content_filter", () => {
    const chunks = runStream([fixture("generate-content-prompt-blocked.json")]);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason ?? null)).toEqual([null, "content_filter", null]);
    expect(chunks.at(-1).usage.prompt_tokens).toBe(11);
  });

  it("closes a stream that ended without a finishReason and ignores empty events", () => {
    const transformer = createGeminiStreamTransformer(context({ stream: true }));
    expect(transformer.push({ data: "" })).toEqual([]);
    transformer.push({ data: JSON.stringify({ candidates: [{ content: { parts: [{ text: "a" }] } }] }) });
    const end = transformer.end() as any[];
    expect(end).toHaveLength(1);
    expect(end[0].choices[0].finish_reason).toBe("stop");
    expect(end[0].id).toBe("chatcmpl-test");
  });
});

describe("embeddings", () => {
  const embeddings = googleAdapter.routes.embeddings!;

  it("builds a batchEmbedContents request", async () => {
    const ctx = context({ route: "embeddings", model: "gemini-embedding-001" });
    const request = await embeddings.buildRequest(
      { input: ["a", "b"], model: "x", dimensions: 256, task_type: "RETRIEVAL_QUERY" },
      ctx,
    );
    expect(request.url).toBe(
      "https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents",
    );
    expect(JSON.parse(String(request.body))).toEqual({
      requests: [
        {
          model: "models/gemini-embedding-001",
          content: { parts: [{ text: "a" }] },
          outputDimensionality: 256,
          taskType: "RETRIEVAL_QUERY",
        },
        {
          model: "models/gemini-embedding-001",
          content: { parts: [{ text: "b" }] },
          outputDimensionality: 256,
          taskType: "RETRIEVAL_QUERY",
        },
      ],
    });
    const single = await embeddings.buildRequest({ input: "solo" }, ctx);
    expect(JSON.parse(String(single.body)).requests).toEqual([
      { model: "models/gemini-embedding-001", content: { parts: [{ text: "solo" }] } },
    ]);
  });

  it("rejects token-id input", () => {
    expect(() => embeddings.buildRequest({ input: [[1, 2, 3]] }, context({ route: "embeddings" }))).toThrow(
      UpstreamError,
    );
  });

  it("maps the response to the OpenAI list with zero usage when Google gives none", () => {
    const ctx = context({ route: "embeddings", model: "gemini-embedding-001" });
    expect(embeddings.transformResponse(fixture("batch-embed-contents.json"), ctx)).toEqual({
      object: "list",
      data: [
        { object: "embedding", index: 0, embedding: [0.0123, -0.0456, 0.0789, 0.5] },
        { object: "embedding", index: 1, embedding: [-0.25, 0.125, 0.0625, -0.5] },
      ],
      model: "gemini-embedding-001",
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
  });

  it("encodes vectors as base64 float32 when the client asked for base64", async () => {
    const ctx = context({ route: "embeddings", model: "gemini-embedding-001" });
    await embeddings.buildRequest({ input: ["a", "b"], encoding_format: "base64" }, ctx);
    const result: any = embeddings.transformResponse(fixture("batch-embed-contents.json"), ctx);
    const decoded = new Float32Array(Uint8Array.from(Buffer.from(result.data[1].embedding, "base64")).buffer);
    expect([...decoded]).toEqual([-0.25, 0.125, 0.0625, -0.5]);
  });
});

describe("models list", () => {
  it("lists models without the models/ prefix", async () => {
    const models = googleAdapter.routes.models!;
    const request = await models.buildRequest({}, context({ route: "models" }));
    expect(request).toMatchObject({
      method: "GET",
      url: "https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000",
    });
    expect(models.transformResponse(fixture("models-list.json"), context())).toEqual({
      object: "list",
      data: [
        { id: "gemini-2.5-flash", object: "model", created: 0, owned_by: "google" },
        { id: "gemini-embedding-001", object: "model", created: 0, owned_by: "google" },
      ],
    });
  });
});

describe("against the mock Gemini server", () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startGoogleMock({ apiKey: "mock-key", text: "Streaming works fine" });
  });
  afterAll(() => mock.close());

  const mockContext = (overrides: Partial<TransformContext> = {}) =>
    context({ target: { provider: "google", apiKey: "mock-key", customHost: mock.url }, ...overrides });

  async function send(route: "chat" | "embeddings", body: Record<string, any>, ctx: TransformContext) {
    const request = await googleAdapter.routes[route]!.buildRequest(body, ctx);
    return fetch(request.url, { method: request.method, headers: request.headers, body: request.body as string });
  }

  it("answers generateContent", async () => {
    const response = await send("chat", { messages: [{ role: "user", content: "Hi" }] }, mockContext());
    expect(response.status).toBe(200);
    const completion: any = chat.transformResponse(await response.json(), mockContext());
    expect(completion.choices[0].message.content).toBe("Streaming works fine");
    expect(mock.requests.at(-1)?.headers["x-goog-api-key"]).toBe("mock-key");
  });

  it("streams SSE events that the transformer turns into chunks", async () => {
    const ctx = mockContext({ stream: true });
    const response = await send("chat", { messages: [{ role: "user", content: "Hi" }], stream: true }, ctx);
    const transformer = chat.stream!.createTransformer(ctx);
    const chunks: any[] = [];
    for await (const event of decodeSse(response.body as unknown as AsyncIterable<Uint8Array>))
      chunks.push(...transformer.push(event));
    chunks.push(...transformer.end());
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("")).toBe("Streaming works fine");
    expect(chunks.at(-1).usage.total_tokens).toBe(13);
  });

  it("answers embeddings and rejects a wrong key the way Google does", async () => {
    const ctx = mockContext({ route: "embeddings", model: "gemini-embedding-001" });
    const response = await send("embeddings", { input: ["a", "b"], dimensions: 3 }, ctx);
    const result: any = googleAdapter.routes.embeddings!.transformResponse(await response.json(), ctx);
    expect(result.data.map((item: any) => item.embedding.length)).toEqual([3, 3]);

    const denied = await send(
      "chat",
      { messages: [{ role: "user", content: "Hi" }] },
      context({ target: { provider: "google", apiKey: "bad", customHost: mock.url } }),
    );
    expect(denied.status).toBe(400);
    expect(((await denied.json()) as any).error.status).toBe("INVALID_ARGUMENT");
  });
});
