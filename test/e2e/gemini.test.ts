import { ApiError, GoogleGenAI, Type } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import type { MockServer } from "../helpers/mock-server.ts";
import { MOCK_THOUGHT_SIGNATURE, startGoogleMock } from "../mocks/google.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";
import { createTestServiceAccount, type VertexMock, startVertexMock } from "../mocks/vertex.ts";

/**
 * Google's Gemini API in front of any provider, driven by the official @google/genai SDK with its base URL at the
 * gateway: natively on Google and on Vertex AI's Gemini models (the body forwarded as it is, parsed for usage),
 * translated to chat completions for an OpenAI-compatible provider. generateContent, generateContentStream,
 * function calling, structured output, countTokens, the streamed JSON array, the key as Google's clients send
 * it, Google-shaped errors, guardrails, cache and logs.
 */

let gateway: TestGateway;
let google: MockServer;
let vertex: VertexMock;
let openai: OpenAIMock;
let vertexAccount: string;

beforeAll(async () => {
  [gateway, google, vertex, openai] = await Promise.all([
    startTestGateway(),
    startGoogleMock({ apiKey: "google-key" }),
    startVertexMock(),
    startOpenAIMock({ reply: "Hello from chat.", toolArguments: { city: "Paris" } }),
  ]);
  vertexAccount = (await createTestServiceAccount(vertex.tokenUri)).json;
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([google, vertex, openai].map((mock) => mock?.close()));
});

/** The SDK as a user points it at the gateway: the provider key as `apiKey`, the gateway's headers beside it. */
function genai(headers: Record<string, string>, apiKey = "google-key"): GoogleGenAI {
  return new GoogleGenAI({
    apiKey,
    httpOptions: { baseUrl: gateway.url, headers: { "x-gateway-api-key": gateway.adminKey, ...headers } },
  });
}

const targets = () => [
  {
    name: "google (native)",
    model: "gemini-2.5-flash",
    client: genai({ "x-gateway-provider": "google", "x-gateway-custom-host": google.url }),
    upstream: google as MockServer,
  },
  {
    name: "vertex-ai (native)",
    model: "gemini-2.5-pro",
    client: genai({
      "x-gateway-provider": "vertex-ai",
      "x-gateway-custom-host": vertex.url,
      "x-gateway-vertex-region": "us-central1",
      "x-gateway-vertex-service-account-json": vertexAccount,
    }),
    upstream: vertex as MockServer,
  },
  {
    name: "openai-compatible (translated)",
    model: "gpt-4o-mini",
    client: genai({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${openai.url}/v1` }, "sk-openai"),
    upstream: openai as MockServer,
  },
];

const weather = {
  functionDeclarations: [
    {
      name: "get_weather",
      description: "Weather for a city",
      parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ["city"] },
    },
  ],
};

async function post(path: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe("the Gemini API on any provider", () => {
  it("generateContent and generateContentStream", async () => {
    for (const { name, model, client } of targets()) {
      const answer = await client.models.generateContent({
        model,
        contents: "Hi",
        config: { systemInstruction: "Be brief." },
      });
      expect(answer.text, name).toBeTruthy();
      expect(answer.candidates?.[0]?.finishReason, name).toBe("STOP");
      expect(answer.usageMetadata?.promptTokenCount, name).toBeGreaterThan(0);
      let streamed = "";
      let chunks = 0;
      let usage: number | undefined;
      for await (const chunk of await client.models.generateContentStream({ model, contents: "Hi" })) {
        chunks++;
        streamed += chunk.text ?? "";
        usage = chunk.usageMetadata?.totalTokenCount ?? usage;
      }
      expect(streamed, name).toBe(answer.text);
      expect(chunks, name).toBeGreaterThan(1);
      expect(usage, name).toBeGreaterThan(0);
    }
  });

  it("native targets get the body as sent and the provider key in their own form; the model is in the URL", async () => {
    google.requests.length = 0;
    await targets()[0]!.client.models.generateContent({
      model: "gemini-2.5-flash",
      contents: "Hi",
      config: { safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT" as never, threshold: "BLOCK_NONE" as never }] },
    });
    const sent = google.requests.at(-1)!;
    expect(sent.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent.headers["x-goog-api-key"]).toBe("google-key");
    const body = sent.json();
    expect(body).not.toHaveProperty("model");
    expect(body).not.toHaveProperty("stream");
    expect(body.safetySettings).toEqual([{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }]);
    expect(vertex.requests.some((request) => request.headers.authorization === `Bearer ${vertex.accessToken}`)).toBe(
      true,
    );
    expect(vertex.requests.at(-1)!.path).toContain(
      "/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
    );
    // Translated: the key as the provider's bearer token, never Google's header.
    openai.reset();
    await targets()[2]!.client.models.generateContent({ model: "gpt-4o-mini", contents: "Hi" });
    expect(openai.lastRequest()!.headers.authorization).toBe("Bearer sk-openai");
    expect(openai.lastRequest()!.headers["x-goog-api-key"]).toBeUndefined();
  });

  it("thought signatures come back byte-identical on the native path, and go back to Google as sent", async () => {
    const { client, model } = targets()[0]!;
    const config = { tools: [weather], thinkingConfig: { includeThoughts: true } };
    const first = await client.models.generateContent({ model, contents: "Weather in Paris?", config });
    const parts = first.candidates![0]!.content!.parts!;
    expect(parts.find((part) => part.functionCall)?.thoughtSignature).toBe(MOCK_THOUGHT_SIGNATURE);
    const streamed: string[] = [];
    for await (const chunk of await client.models.generateContentStream({
      model,
      contents: "Weather in Paris?",
      config,
    })) {
      for (const part of chunk.candidates?.[0]?.content?.parts ?? [])
        if (part.thoughtSignature) streamed.push(part.thoughtSignature);
    }
    expect(streamed).toEqual([MOCK_THOUGHT_SIGNATURE]);
    const turns = [
      { role: "user", parts: [{ text: "Weather in Paris?" }] },
      first.candidates![0]!.content!,
      { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { temperature: 21 } } }] },
    ];
    const second = await client.models.generateContent({ model, contents: turns, config });
    expect(second.text).toBeTruthy();
    const history = google.requests.at(-1)!.json().contents;
    expect(history[1].parts.find((part: any) => part.functionCall).thoughtSignature).toBe(MOCK_THOUGHT_SIGNATURE);
  });

  it("a function-calling round trip, translated: functionCall out, functionResponse back as a tool message", async () => {
    const { client, model } = targets()[2]!;
    const asked = await client.models.generateContent({
      model,
      contents: "Weather in Paris?",
      config: { tools: [weather] },
    });
    const called = asked.functionCalls?.[0];
    expect(called).toMatchObject({ name: "get_weather", args: { city: "Paris" } });
    const sentTools = openai.lastRequest()!.json().tools;
    expect(sentTools[0].function.parameters).toEqual({
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    });
    const answered = await client.models.generateContent({
      model,
      contents: [
        { role: "user", parts: [{ text: "Weather in Paris?" }] },
        asked.candidates![0]!.content!,
        {
          role: "user",
          parts: [{ functionResponse: { id: called!.id, name: "get_weather", response: { temperature: 21 } } }],
        },
      ],
      config: { tools: [weather], toolConfig: { functionCallingConfig: { mode: "NONE" as never } } },
    });
    expect(answered.text).toBe("Hello from chat.");
    const sent = openai.lastRequest()!.json();
    expect(sent.tool_choice).toBe("none");
    const tool = sent.messages.find((message: any) => message.role === "tool");
    expect(JSON.parse(tool.content)).toEqual({ temperature: 21 });
    expect(sent.messages.find((message: any) => message.tool_calls)?.tool_calls[0].id).toBe(tool.tool_call_id);

    let streamedCall: unknown;
    for await (const chunk of await client.models.generateContentStream({
      model,
      contents: "Weather?",
      config: { tools: [weather] },
    })) {
      streamedCall ??= chunk.functionCalls?.[0];
    }
    expect(streamedCall).toMatchObject({ name: "get_weather", args: { city: "Paris" } });
  });

  it("structured output, translated: responseSchema as chat's json_schema", async () => {
    const { client, model } = targets()[2]!;
    await client.models.generateContent({
      model,
      contents: "A city",
      config: {
        responseMimeType: "application/json",
        responseSchema: { type: Type.OBJECT, properties: { name: { type: Type.STRING, nullable: true } } },
        maxOutputTokens: 50,
        temperature: 0.2,
        stopSequences: ["END"],
      },
    });
    const sent = openai.lastRequest()!.json();
    expect(sent.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "response", schema: { type: "object", properties: { name: { type: ["string", "null"] } } } },
    });
    expect(sent).toMatchObject({ max_tokens: 50, temperature: 0.2, stop: ["END"] });
  });

  it("countTokens: Google's own count natively, the gateway's tokenizer elsewhere", async () => {
    for (const { name, model, client } of targets()) {
      const count = await client.models.countTokens({ model, contents: "Hello there, how are you today?" });
      expect(count.totalTokens, name).toBeGreaterThan(0);
    }
    expect(google.requests.some((request) => request.path.endsWith(":countTokens"))).toBe(true);
  });

  it("streamGenerateContent without alt=sse is one JSON array streamed; ?key= is the provider key", async () => {
    const headers = {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": "google",
      "x-gateway-custom-host": google.url,
    };
    const body = { contents: [{ role: "user", parts: [{ text: "Hi" }] }] };
    const array = await post("/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=google-key", body, headers);
    expect(array.status).toBe(200);
    expect(array.headers.get("content-type")).toContain("application/json");
    const chunks = JSON.parse(array.text);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((chunk: any) => chunk.candidates[0].content.parts[0].text).join("")).toBe(
      "Hello from mock Gemini",
    );
    expect(google.requests.at(-1)!.headers["x-goog-api-key"]).toBe("google-key");
    const wrongKey = await post("/v1beta/models/gemini-2.5-flash:generateContent?key=nope", body, headers);
    expect(wrongKey.status).toBe(400);
    expect(JSON.parse(wrongKey.text).error.message).toContain("API key not valid");
  });
});

describe("errors are Google's", () => {
  const google400 = (text: string) => {
    const body = JSON.parse(text);
    expect(Object.keys(body)).toEqual(["error"]);
    expect(typeof body.error.code).toBe("number");
    return body.error as { code: number; message: string; status: string };
  };

  it("authentication, validation, an unknown method, a missing provider", async () => {
    const body = { contents: [{ role: "user", parts: [{ text: "Hi" }] }] };
    const noKey = await post("/v1beta/models/gemini-2.5-flash:generateContent", body, {
      "x-gateway-provider": "google",
    });
    expect(noKey.status).toBe(401);
    expect(google400(noKey.text)).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
    const admin = {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": "google",
      "x-gateway-custom-host": google.url,
    };
    const invalid = await post("/v1beta/models/gemini-2.5-flash:generateContent", { contents: [] }, admin);
    expect(google400(invalid.text)).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    expect(google400(invalid.text).message).toContain("contents");
    const unknown = await post("/v1beta/models/gemini-2.5-flash:embedContent", body, admin);
    expect(google400(unknown.text)).toMatchObject({ code: 404, status: "NOT_FOUND" });
    const unnamed = await post("/v1beta/models/gemini-2.5-flash:generateContent", body, {
      "x-gateway-api-key": gateway.adminKey,
    });
    expect(google400(unnamed.text)).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    // The SDK raises its ApiError with the status.
    const sdk = genai({ "x-gateway-provider": "google", "x-gateway-custom-host": google.url }, "wrong-key");
    const refused = sdk.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" });
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({ status: 400 });
  });

  it("what chat cannot carry is refused with 400 naming the field, before any provider call", async () => {
    openai.reset();
    const { client, model } = targets()[2]!;
    await expect(
      client.models.generateContent({ model, contents: "Hi", config: { tools: [{ googleSearch: {} }] } }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining("tools[0].googleSearch") });
    expect(openai.requests).toHaveLength(0);
  });

  it("a stream that fails after its first chunk ends with Google's error object; the SDK raises it", async () => {
    const failing = await startGoogleMock({ streamFailAfter: 1 });
    try {
      const client = genai({ "x-gateway-provider": "google", "x-gateway-custom-host": failing.url });
      const chunks: string[] = [];
      const read = async () => {
        for await (const chunk of await client.models.generateContentStream({
          model: "gemini-2.5-flash",
          contents: "Hi there you",
        })) {
          chunks.push(chunk.text ?? "");
        }
      };
      await expect(read()).rejects.toMatchObject({ status: 503 });
      expect(chunks).toEqual(["Hello "]);
    } finally {
      await failing.close();
    }
    openai.setFault({ streamFailAfter: 2, times: 1 });
    const translated = await post(
      "/v1beta/models/gpt-4o-mini:streamGenerateContent?alt=sse",
      { contents: [{ role: "user", parts: [{ text: "Hi" }] }] },
      {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${openai.url}/v1`,
      },
    );
    const last = JSON.parse(translated.text.trimEnd().split("\n\n").at(-1)!.slice("data: ".length));
    expect(last.error).toMatchObject({ status: expect.any(String) });
    expect(last.error.code).toBeGreaterThanOrEqual(500);
  });

  it("a guardrail's 446 in Google's shape with hook_results; a guarded stream still streams", async () => {
    const config = {
      provider: "google",
      custom_host: google.url,
      input_guardrails: [{ "default.regexMatch": { rule: "(?i)password", not: true }, deny: true }],
    };
    const headers = {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-config": JSON.stringify(config),
      "x-goog-api-key": "google-key",
    };
    const denied = await post(
      "/v1beta/models/gemini-2.5-flash:generateContent",
      { contents: [{ parts: [{ text: "my password" }] }] },
      headers,
    );
    expect(denied.status).toBe(446);
    const body = JSON.parse(denied.text);
    expect(body.error).toMatchObject({ code: 446, status: "INVALID_ARGUMENT" });
    expect(body.hook_results.before_request_hooks[0].verdict).toBe(false);
    const allowed = await post(
      "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
      { contents: [{ parts: [{ text: "hello" }] }] },
      headers,
    );
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain('"finishReason":"STOP"');
    // An output guardrail judges the whole streamed answer: its denial ends the stream as Google's error object.
    const output = {
      ...config,
      input_guardrails: undefined,
      output_guardrails: [{ "default.regexMatch": { rule: "mock Gemini", not: true }, deny: true }],
    };
    const judged = await post(
      "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
      { contents: [{ parts: [{ text: "hello" }] }] },
      { ...headers, "x-gateway-config": JSON.stringify(output) },
    );
    const events = judged.text.trimEnd().split("\n\n");
    expect(JSON.parse(events.at(-1)!.slice("data: ".length)).error).toMatchObject({ code: 446 });
    expect(judged.text).not.toContain('"finishReason"');
  });
});

describe("one pipeline: cache, logs, workspaces", () => {
  it("a cached answer is served again, JSON and stream, without calling the provider", async () => {
    const config = { provider: "google", custom_host: google.url, cache: { mode: "simple" } };
    const client = genai({ "x-gateway-config": JSON.stringify(config) });
    const contents = `cache me ${Date.now()}`;
    const before = google.requests.length;
    const first = await client.models.generateContent({ model: "gemini-2.5-flash", contents });
    const second = await client.models.generateContent({ model: "gemini-2.5-flash", contents });
    expect(second.text).toBe(first.text);
    const streamContents = `${contents} streamed`;
    const texts: string[] = [];
    for (let round = 0; round < 2; round++) {
      let text = "";
      for await (const chunk of await client.models.generateContentStream({
        model: "gemini-2.5-flash",
        contents: streamContents,
      })) {
        text += chunk.text ?? "";
      }
      texts.push(text);
    }
    expect(texts[1]).toBe(texts[0]);
    expect(google.requests.length - before).toBe(2);
  });

  it("usage and cost are logged; another workspace sees none of it and cannot use this one's saved provider", async () => {
    const mine = await seedWorkspace(gateway, "Gemini mine");
    const theirs = await seedWorkspace(gateway, "Gemini theirs");
    const saved = await call(gateway, gateway.adminKey, "POST", "/v1/virtual-keys", {
      name: "gemini",
      slug: "gemini-mine",
      provider: "google",
      key: "google-key",
      custom_host: google.url,
      workspace_id: mine.id,
    });
    expect(saved.status, saved.text).toBe(201);
    const keyOf = async (workspaceId: string) =>
      (
        await createKey(gateway, gateway.adminKey, "workspace", "service", {
          name: "gemini",
          workspace_id: workspaceId,
          scopes: ["completions.write", "logs.list", "logs.view"],
        })
      ).key;
    const [myKey, theirKey] = await Promise.all([keyOf(mine.id), keyOf(theirs.id)]);
    const client = (key: string) =>
      new GoogleGenAI({
        apiKey: "unused",
        httpOptions: {
          baseUrl: gateway.url,
          headers: { "x-gateway-api-key": key, "x-gateway-provider": "@gemini-mine" },
        },
      });
    const answer = await client(myKey).models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" });
    expect(answer.text).toBeTruthy();
    await expect(
      client(theirKey).models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" }),
    ).rejects.toMatchObject({
      status: 404,
    });
    const logs = async (key: string) =>
      ((await call(gateway, key, "GET", "/v1/logs?limit=50")).body.data as any[]).filter((log) =>
        /^\/v1(beta)?\/models\/.+:generateContent$/.test(String(log.path)),
      );
    await expect.poll(async () => (await logs(myKey)).length, { timeout: 5000 }).toBeGreaterThan(0);
    const [log] = await logs(myKey);
    expect(log).toMatchObject({ provider: "google", status: 200 });
    expect(log.usage.totalTokens).toBeGreaterThan(0);
    expect(log.cost).toBeGreaterThan(0);
    expect((await logs(theirKey)).every((entry) => entry.status !== 200)).toBe(true);
  });
});
