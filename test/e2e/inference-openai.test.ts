import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, sendJson, startMockServer, writeSse } from "../helpers/mock-server.ts";
import { validatingFetch } from "../helpers/openai-schema.ts";

/** The official openai client against the local gateway, routed to an OpenAI-shaped mock over real HTTP. */

let gateway: TestGateway;
let upstream: MockServer;
let client: OpenAI;

const completion = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "gpt-4o-mini",
  system_fingerprint: "fp_1",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "Hello there", refusal: null },
      logprobs: null,
      finish_reason: "stop",
    },
  ],
  usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 },
};

/**
 * A chunk as OpenAI streams it (per its API reference): with `include_usage` every chunk carries `"usage": null`
 * (the last one, without choices, the usage), and by default an `obfuscation` field of random padding.
 */
const chunk = (delta: object, finish: string | null = null, options: { usage?: boolean; pad?: string } = {}) => ({
  id: "chatcmpl-2",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "gpt-4o-mini",
  service_tier: "default",
  system_fingerprint: "fp_2",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  ...(options.usage ? { usage: null } : {}),
  ...(options.pad ? { obfuscation: options.pad } : {}),
});

beforeAll(async () => {
  upstream = await startMockServer((req, res) => {
    if (req.path === "/v1/chat/completions") {
      const body = req.json();
      if (body.stream) {
        const usage = body.stream_options?.include_usage === true;
        const events = [
          chunk({ role: "assistant", content: "", refusal: null }, null, { usage, pad: "k3Vr" }),
          chunk({ content: "Hel" }, null, { usage, pad: "x" }),
          chunk({ content: 'lo "you"' }, null, { usage, pad: 'q\\"z' }),
          chunk({}, "stop", { usage, pad: "Zp0m" }),
        ];
        const all: Array<{ data: unknown }> = events.map((data) => ({ data }));
        if (usage) {
          all.push({
            data: { ...chunk({}), choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } },
          });
        }
        all.push({ data: "[DONE]" });
        return writeSse(res, all, 30);
      }
      return sendJson(res, 200, completion);
    }
    if (req.path === "/v1/embeddings") {
      return sendJson(res, 200, {
        object: "list",
        data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }],
        model: "text-embedding-3-small",
        usage: { prompt_tokens: 3, total_tokens: 3 },
      });
    }
    if (req.path === "/v1/completions") {
      return sendJson(res, 200, {
        id: "cmpl-1",
        object: "text_completion",
        created: 1,
        model: "gpt-3.5-turbo-instruct",
        choices: [{ index: 0, text: " world", logprobs: null, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
    }
    if (req.path === "/v1/models")
      return sendJson(res, 200, {
        object: "list",
        data: [{ id: "mock-model", object: "model", created: 1, owned_by: "mock" }],
      });
    if (req.path === "/v1/fail") return sendJson(res, 500, {});
    sendJson(res, 429, { error: { message: "slow down", type: "rate_limit_error", code: "rate_limited" } });
  });
  gateway = await startTestGateway();
  client = new OpenAI({
    // Every OpenAI-shaped answer is checked against OpenAI's published OpenAPI document.
    fetch: validatingFetch(),
    apiKey: "sk-provider-key",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/v1`,
    },
    maxRetries: 0,
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe("chat completions through the gateway", () => {
  it("returns the provider's chat.completion unchanged and sends the provider key as a bearer token", async () => {
    const result = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hi" }],
      logprobs: true,
      top_logprobs: 2,
    });
    expect(result).toMatchObject({ id: "chatcmpl-1", system_fingerprint: "fp_1", usage: { total_tokens: 13 } });
    expect(result.choices[0]!.message.content).toBe("Hello there");
    const sent = upstream.requests.at(-1)!;
    expect(sent.headers.authorization).toBe("Bearer sk-provider-key");
    expect(sent.headers["x-gateway-api-key"]).toBeUndefined();
    expect(sent.json()).toMatchObject({ model: "gpt-4o-mini", logprobs: true, top_logprobs: 2 });
  });

  it("streams chunks as they arrive and hides the usage chunk the client did not ask for", async () => {
    const trace = `stream-${Date.now()}`;
    const stream = await client.chat.completions.create(
      { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], stream: true },
      { headers: { "x-gateway-trace-id": trace } },
    );
    const arrivals: number[] = [];
    let text = "";
    let sawUsage = false;
    for await (const part of stream) {
      arrivals.push(Date.now());
      text += part.choices[0]?.delta?.content ?? "";
      if (part.usage) sawUsage = true;
    }
    expect(text).toBe('Hello "you"');
    expect(sawUsage).toBe(false);
    // The mock pauses 30 ms between events: chunks must not arrive in one burst.
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(50);
    expect(upstream.requests.at(-1)!.json().stream_options).toEqual({ include_usage: true });
    // The log has the usage of the hidden chunk and the answer the chunks spell.
    const logOf = async () => {
      const list = await fetch(`${gateway.url}/v1/logs?trace_id=${trace}`, {
        headers: { "x-gateway-api-key": gateway.adminKey },
      });
      const id = (await list.json()).data?.[0]?.id;
      if (!id) return undefined;
      const one = await fetch(`${gateway.url}/v1/logs/${id}`, { headers: { "x-gateway-api-key": gateway.adminKey } });
      return one.json();
    };
    await expect.poll(logOf, { timeout: 5000 }).toBeDefined();
    expect(await logOf()).toMatchObject({
      answeredModel: "gpt-4o-mini",
      usage: { promptTokens: 5, completionTokens: 2, totalTokens: 7, estimated: false },
      responseBody: {
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: 'Hello "you"' }, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
        streamed_chunks: 5,
      },
    });
  });

  it("passes the usage chunk when the client asks for it", async () => {
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const part of stream) if (part.usage) usage = part.usage;
    // The provider's usage, with the request's cost added (USD, and per component).
    expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    const { cost, cost_details } = usage as { cost: number; cost_details: Record<string, number> };
    expect(cost).toBeGreaterThan(0);
    expect(cost_details.input + cost_details.output).toBeCloseTo(cost, 12);
  });

  it("answers 400 naming the param for out-of-range values", async () => {
    const error = await client.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], temperature: 3 })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ param: "temperature", type: "invalid_request_error" });
  });

  it("maps provider errors to the OpenAI shape and keeps the upstream status", async () => {
    const error = await client.chat.completions
      .create(
        { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] },
        { headers: { "x-gateway-custom-host": `${upstream.url}/v1/other` } },
      )
      .catch((caught) => caught);
    expect(error.status).toBe(429);
    expect(error.error).toMatchObject({ message: "slow down", code: "rate_limited" });
  });
});

describe("other inference routes", () => {
  it("completions", async () => {
    const result = await client.completions.create({ model: "gpt-3.5-turbo-instruct", prompt: "Hello" });
    expect(result.choices[0]!.text).toBe(" world");
  });

  it("embeddings", async () => {
    const result = await client.embeddings.create({
      model: "text-embedding-3-small",
      input: "abc",
      encoding_format: "float",
    });
    expect(result.data[0]!.embedding).toEqual([0.1, 0.2]);
  });

  it("models: the integrated catalog by default, the provider's list when a provider is named", async () => {
    const plain = new OpenAI({
      apiKey: "x",
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": gateway.adminKey },
    });
    const catalog = await plain.models.list();
    expect(catalog.data.length).toBeGreaterThanOrEqual(250);
    const proxied = await client.models.list();
    expect(proxied.data.map((model) => model.id)).toEqual(["mock-model"]);
    const forced = await client.models.list({ headers: { "x-gateway-fetch-integrated-models": "true" } });
    expect(forced.data.length).toBe(catalog.data.length);
  });

  it("models.retrieve: one model of the same source, an id with slashes, OpenAI's 404 for an unknown one", async () => {
    const plain = new OpenAI({
      apiKey: "x",
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": gateway.adminKey },
      maxRetries: 0,
    });
    const listed = (await plain.models.list()).data.find((model) => model.id === "gpt-4o")!;
    const one = await plain.models.retrieve("gpt-4o");
    expect(one).toMatchObject({ id: "gpt-4o", object: "model", owned_by: listed.owned_by });
    // The provider's own list when a provider is named: the mock upstream's model, and not the catalog's.
    expect(await client.models.retrieve("mock-model")).toMatchObject({ id: "mock-model", object: "model" });
    await expect(client.models.retrieve("gpt-4o")).rejects.toMatchObject({ status: 404 });
    // Groq's catalog ids hold slashes; the SDK sends the id as one path segment or several alike.
    expect((await plain.models.retrieve("openai/gpt-oss-20b")).id).toBe("openai/gpt-oss-20b");
    const unknown = await fetch(`${gateway.url}/v1/models/no-such-model`, {
      headers: { "x-gateway-api-key": gateway.adminKey },
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      error: {
        message: "The model 'no-such-model' does not exist or you do not have access to it.",
        type: "invalid_request_error",
        param: "model",
        code: "model_not_found",
      },
    });
  });

  it("rejects a wrong gateway key with 401", async () => {
    const bad = new OpenAI({
      apiKey: "x",
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": "gk-wrong" },
      maxRetries: 0,
    });
    await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
