import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * The response cache (docs/caching.md) over real HTTP with the openai SDK: the mock upstream counts the calls
 * that reach it, so a HIT is an answer the provider never saw.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;

beforeAll(async () => {
  upstream = await startOpenAIMock({ reply: "Paris is the capital of France." });
  gateway = await startTestGateway({ GATEWAY_CACHE_MAX_ENTRY_BYTES: "4096" });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => upstream.reset());

const chatCalls = () => upstream.requests.filter((request) => request.path.endsWith("/chat/completions")).length;

function configOf(cache: Record<string, unknown> = { mode: "simple" }, extra: Record<string, unknown> = {}) {
  return JSON.stringify({ provider: "openai", custom_host: `${upstream.url}/v1`, cache, ...extra });
}

function client(headers: Record<string, string> = {}, key = gateway.adminKey, config = configOf()) {
  return new OpenAI({
    apiKey: "sk-upstream",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "x-gateway-api-key": key, "x-gateway-config": config, ...headers },
  });
}

let question = 0;
/** A question no other test asked (the cache outlives each test). */
const fresh = () => `What is the capital of France? (${++question}-${Math.random()})`;

async function ask(openai: OpenAI, content: string, extra: Record<string, unknown> = {}) {
  const { data, response } = await openai.chat.completions
    .create({ model: "gpt-4o-mini", messages: [{ role: "user", content }], ...extra })
    .withResponse();
  return { body: data, status: response.headers.get("x-gateway-cache-status") };
}

async function askStream(openai: OpenAI, content: string, includeUsage = false) {
  const { data: stream, response } = await openai.chat.completions
    .create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content }],
      stream: true,
      ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
    })
    .withResponse();
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");
  return { chunks, text, status: response.headers.get("x-gateway-cache-status") };
}

describe("simple cache", () => {
  it("answers MISS then HIT for JSON, the second never reaching the provider", async () => {
    const openai = client();
    const content = fresh();
    const first = await ask(openai, content);
    const second = await ask(openai, content);
    expect(first.status).toBe("MISS");
    expect(second.status).toBe("HIT");
    expect(second.body).toEqual(first.body);
    expect(chatCalls()).toBe(1);
  });

  it("does not split keys on field order or explicit defaults, nor on metadata", async () => {
    const content = fresh();
    await ask(client({ "x-gateway-metadata": '{"team":"a"}' }), content);
    const again = await ask(client({ "x-gateway-metadata": '{"team":"b"}' }), content, { temperature: 1, n: 1 });
    expect(again.status).toBe("HIT");
    const different = await ask(client(), content, { temperature: 0.2 });
    expect(different.status).toBe("MISS");
    expect(chatCalls()).toBe(2);
  });

  it("answers MISS then HIT for streams, replayed as well-formed chunks with usage when asked", async () => {
    const openai = client();
    const content = fresh();
    const first = await askStream(openai, content);
    const second = await askStream(openai, content, true);
    expect(first.status).toBe("MISS");
    expect(second.status).toBe("HIT");
    expect(second.text).toBe(first.text);
    expect(second.text).toBe("Paris is the capital of France.");
    expect(second.chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    expect(second.chunks.every((chunk) => chunk.object === "chat.completion.chunk")).toBe(true);
    const finish = second.chunks.find((chunk) => chunk.choices[0]?.finish_reason);
    expect(finish?.choices[0]?.finish_reason).toBe("stop");
    expect(second.chunks.at(-1)!.usage?.total_tokens).toBeGreaterThan(0);
    expect(chatCalls()).toBe(1);
  });

  it("serves a JSON request from a streamed entry and a stream from a JSON entry", async () => {
    const openai = client();
    const streamedFirst = fresh();
    await askStream(openai, streamedFirst);
    const asJson = await ask(openai, streamedFirst);
    expect(asJson.status).toBe("HIT");
    expect(asJson.body.choices[0]!.message.content).toBe("Paris is the capital of France.");
    expect(asJson.body.usage?.total_tokens).toBeGreaterThan(0);

    const jsonFirst = fresh();
    await ask(openai, jsonFirst);
    const asStream = await askStream(openai, jsonFirst);
    expect(asStream.status).toBe("HIT");
    expect(asStream.text).toBe("Paris is the capital of France.");
    expect(chatCalls()).toBe(2);
  });

  it("refreshes with x-gateway-cache-force-refresh and serves the new answer afterwards", async () => {
    const content = fresh();
    await ask(client(), content);
    upstream.options.reply = "Refreshed answer.";
    try {
      const refreshed = await ask(client({ "x-gateway-cache-force-refresh": "true" }), content);
      expect(refreshed.status).toBe("REFRESH");
      expect(refreshed.body.choices[0]!.message.content).toBe("Refreshed answer.");
      await new Promise((resolve) => setTimeout(resolve, 50));
      const after = await ask(client(), content);
      expect(after.status).toBe("HIT");
      expect(after.body.choices[0]!.message.content).toBe("Refreshed answer.");
      expect(chatCalls()).toBe(2);
    } finally {
      upstream.options.reply = "Paris is the capital of France.";
    }
  });

  it("answers 400 for invalid cache header values", async () => {
    const invalid: Array<Record<string, string>> = [
      { "x-gateway-cache-force-refresh": "yes please" },
      { "x-gateway-cache-namespace": "has spaces in it" },
      { "x-portkey-cache-namespace": "x".repeat(129) },
    ];
    for (const headers of invalid) {
      const error = await ask(client(headers), fresh()).catch((thrown) => thrown);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.error).toMatchObject({ type: "invalid_request_error", code: "invalid_header" });
    }
    expect(chatCalls()).toBe(0);
  });

  it("partitions the cache by x-gateway-cache-namespace (and its x-portkey- alias)", async () => {
    const content = fresh();
    await ask(client({ "x-gateway-cache-namespace": "alpha" }), content);
    expect((await ask(client({ "x-gateway-cache-namespace": "beta" }), content)).status).toBe("MISS");
    expect((await ask(client({ "x-portkey-cache-namespace": "alpha" }), content)).status).toBe("HIT");
    expect((await ask(client(), content)).status).toBe("MISS");
    expect(chatCalls()).toBe(3);
  });

  it("expires entries after max_age: a miss, then stored again", async () => {
    const openai = client({}, gateway.adminKey, configOf({ mode: "simple", max_age: 1 }));
    const content = fresh();
    await ask(openai, content);
    expect((await ask(openai, content)).status).toBe("HIT");
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await ask(openai, content)).status).toBe("MISS");
    expect(chatCalls()).toBe(2);
  });

  it("answers DISABLED without a cache config, and inherits the root's cache in nested targets", async () => {
    const plain = JSON.stringify({ provider: "openai", custom_host: `${upstream.url}/v1` });
    expect((await ask(client({}, gateway.adminKey, plain), fresh())).status).toBe("DISABLED");
    const nested = JSON.stringify({
      strategy: { mode: "fallback" },
      cache: { mode: "simple" },
      targets: [{ provider: "openai", custom_host: `${upstream.url}/v1` }],
    });
    const content = fresh();
    await ask(client({}, gateway.adminKey, nested), content);
    expect((await ask(client({}, gateway.adminKey, nested), content)).status).toBe("HIT");
  });

  it("never caches errors", async () => {
    const content = fresh();
    upstream.setFault({ status: 500, times: 1 });
    await expect(ask(client(), content)).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    const after = await ask(client(), content);
    expect(after.status).toBe("MISS");
    expect(chatCalls()).toBe(2);
  });

  it("never caches a stream cut short by the provider or cancelled by the client", async () => {
    const cut = fresh();
    upstream.setFault({ streamFailAfter: 2, times: 1 });
    await askStream(client(), cut).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await ask(client(), cut)).status).toBe("MISS");

    const cancelled = fresh();
    upstream.options.chunkDelayMs = 30;
    try {
      const { data: stream } = await client()
        .chat.completions.create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: cancelled }],
          stream: true,
        })
        .withResponse();
      for await (const _chunk of stream) break; // the client goes away after the first chunk
    } finally {
      upstream.options.chunkDelayMs = undefined;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await ask(client(), cancelled)).status).toBe("MISS");
  });

  it("does not store answers over GATEWAY_CACHE_MAX_ENTRY_BYTES", async () => {
    upstream.options.reply = "word ".repeat(2000);
    try {
      const content = fresh();
      await ask(client(), content);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await ask(client(), content)).status).toBe("MISS");
    } finally {
      upstream.options.reply = "Paris is the capital of France.";
    }
  });

  it("caches completions, embeddings and pass-through requests too", async () => {
    const openai = client();
    const prompt = fresh();
    const completion = () => openai.completions.create({ model: "gpt-3.5-turbo-instruct", prompt }).withResponse();
    expect((await completion()).response.headers.get("x-gateway-cache-status")).toBe("MISS");
    expect((await completion()).response.headers.get("x-gateway-cache-status")).toBe("HIT");

    const input = fresh();
    const embedding = () => openai.embeddings.create({ model: "text-embedding-3-small", input }).withResponse();
    const first = await embedding();
    const second = await embedding();
    expect(first.response.headers.get("x-gateway-cache-status")).toBe("MISS");
    expect(second.response.headers.get("x-gateway-cache-status")).toBe("HIT");
    expect(second.data.data[0]!.embedding).toEqual(first.data.data[0]!.embedding);

    const passthrough = () =>
      fetch(`${gateway.url}/v1/proxy/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer sk-upstream",
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-config": configOf(),
        },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: prompt }] }),
      });
    const raw1 = await passthrough();
    const text1 = await raw1.text();
    const raw2 = await passthrough();
    expect(raw1.headers.get("x-gateway-cache-status")).toBe("MISS");
    expect(raw2.headers.get("x-gateway-cache-status")).toBe("HIT");
    expect(await raw2.text()).toBe(text1);
    expect(upstream.requests.length).toBe(3);
  });

  it("keeps workspaces apart: the same question in another workspace is a miss", async () => {
    const a = await seedWorkspace(gateway, "Cache A");
    const b = await seedWorkspace(gateway, "Cache B");
    const keyA = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "a",
      workspace_id: a.id,
      scopes: [],
    });
    const keyB = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "b",
      workspace_id: b.id,
      scopes: [],
    });
    const content = fresh();
    for (const namespace of [undefined, "shared"]) {
      const headers: Record<string, string> = namespace ? { "x-gateway-cache-namespace": namespace } : {};
      expect((await ask(client(headers, keyA.key), content)).status).toBe("MISS");
      expect((await ask(client(headers, keyA.key), content)).status).toBe("HIT");
      expect((await ask(client(headers, keyB.key), content)).status).toBe("MISS");
      expect((await ask(client(headers, keyB.key), content)).status).toBe("HIT");
    }
    expect(chatCalls()).toBe(4);
  });

  it("logs a hit with cost 0 and the cost it saved; analytics count hits and saved cost", async () => {
    const content = fresh();
    await ask(client(), content);
    await ask(client(), content);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const headers = { "x-gateway-api-key": gateway.adminKey };
    const logs = await (await fetch(`${gateway.url}/v1/logs?limit=5`, { headers })).json();
    const [hit, miss] = logs.data;
    expect(hit.cacheStatus ?? hit.cache_status).toBe("HIT");
    expect(miss.cacheStatus ?? miss.cache_status).toBe("MISS");
    expect(hit.cost).toBe(0);
    expect(miss.cost).toBeGreaterThan(0);
    expect(hit.cacheSavedCost ?? hit.cache_saved_cost).toBeCloseTo(miss.cost, 10);
    await gateway.gateway.services.analytics.flush();
    const graph = await (await fetch(`${gateway.url}/v1/analytics/graphs/cache-hit-rate`, { headers })).json();
    expect(graph.summary.hits).toBeGreaterThan(0);
    expect(graph.summary.rate).toBeGreaterThan(0);
    expect(graph.summary.saved_cost).toBeGreaterThan(0);
  });
});

describe("semantic cache", () => {
  /** Bag-of-words vectors: paraphrases with the same words are close, other questions are not. */
  const embed = (text: string): number[] => {
    const vector = new Array(64).fill(0);
    for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
      let hash = 0;
      for (const char of word) hash = (hash * 31 + char.charCodeAt(0)) % 64;
      vector[hash] += 1;
    }
    return vector;
  };

  beforeAll(() => {
    // The gateway's own vector index (SQLite + usearch, core/platform/local/sqlite-vector-index.ts).
    upstream.options.guard = (request) => {
      if (!request.path.endsWith("/embeddings")) return undefined;
      const body = request.json() as { input: string; model: string };
      return {
        status: 200,
        body: {
          object: "list",
          data: [{ object: "embedding", index: 0, embedding: embed(body.input) }],
          model: body.model,
          usage: { prompt_tokens: 5, total_tokens: 5 },
        },
      };
    };
  });

  afterAll(() => {
    upstream.options.guard = undefined;
  });

  const semantic = (threshold = 0.9) =>
    configOf({
      mode: "semantic",
      similarity_threshold: threshold,
      embedding: { provider: "openai", custom_host: `${upstream.url}/v1`, model: "text-embedding-3-small" },
    });

  it("answers SEMANTIC HIT for a paraphrase above the threshold and MISS below it", async () => {
    const openai = client({}, gateway.adminKey, semantic());
    const topic = `zanzibar${Math.random().toString(36).slice(2, 8).replace(/\d/g, "q")}`;
    expect((await ask(openai, `What is the capital of ${topic}?`)).status).toBe("MISS");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const paraphrase = await ask(openai, `what is the capital of ${topic}`);
    expect(paraphrase.status).toBe("SEMANTIC HIT");
    expect((await ask(openai, `Tell me a long story about ${topic} dragons and knights`)).status).toBe("MISS");
    expect(chatCalls()).toBe(2);
    const embeddingCalls = upstream.requests.filter((request) => request.path.endsWith("/embeddings")).length;
    expect(embeddingCalls).toBe(3);
  });

  it("needs the rest of the request to match exactly (system prompt, params)", async () => {
    const openai = client({}, gateway.adminKey, semantic());
    const topic = `atlantis${Math.random().toString(36).slice(2, 8).replace(/\d/g, "q")}`;
    await ask(openai, `What is the capital of ${topic}?`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const other = await openai.chat.completions
      .create({
        model: "gpt-4o-mini",
        messages: [
          { role: "system", content: "Answer in French." },
          { role: "user", content: `what is the capital of ${topic}` },
        ],
      })
      .withResponse();
    expect(other.response.headers.get("x-gateway-cache-status")).toBe("MISS");
    expect((await ask(openai, `what is the capital of ${topic}`, { temperature: 0 })).status).toBe("MISS");
  });

  it("refuses a semantic config without an embedding target", async () => {
    const config = configOf({ mode: "semantic" });
    const error = await ask(client({}, gateway.adminKey, config), fresh()).catch((thrown) => thrown);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error.param).toBe("x-gateway-config.cache.embedding");
  });
});
