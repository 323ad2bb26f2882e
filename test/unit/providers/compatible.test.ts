import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  authHeaders,
  type CompatibleProvider,
  createCompatibleAdapter,
  passthroughTransformer,
  prepareCompatibleBody,
  ROUTE_PATHS,
} from "../../../core/providers/openai/compatible.ts";
import { COMPATIBLE_PROVIDERS } from "../../../core/providers/openai/table.ts";
import { decodeSse } from "../../../core/providers/stream/sse.ts";
import type {
  ProviderTarget,
  RouteKind,
  TransformContext,
  UpstreamEvent,
  UpstreamRequest,
} from "../../../core/providers/types.ts";
import { MEDIA_ROUTES, UpstreamError } from "../../../core/providers/types.ts";
import { type OpenAIMock, startOpenAIMock } from "../../mocks/openai.ts";

const fixture = (name: string) => new URL(`../../fixtures/openai/${name}`, import.meta.url);
const json = (name: string) => JSON.parse(readFileSync(fixture(name), "utf8"));

function ctx(
  overrides: Partial<Omit<TransformContext, "target">> & { target?: Partial<ProviderTarget> } = {},
): TransformContext {
  const { target, ...rest } = overrides;
  return {
    route: "chat",
    stream: false,
    model: "gpt-4o",
    now: 1_700_000_000,
    requestId: "req-1",
    includeUsage: false,
    ...rest,
    target: { provider: "openai", apiKey: "sk-test", ...target },
  };
}

async function* single(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

async function collect(source: AsyncIterable<UpstreamEvent>): Promise<UpstreamEvent[]> {
  const events: UpstreamEvent[] = [];
  for await (const event of source) events.push(event);
  return events;
}

const row = (id: string): CompatibleProvider => {
  const found = COMPATIBLE_PROVIDERS.find((provider) => provider.id === id);
  if (!found) throw new Error(`no row ${id}`);
  return found;
};

function build(id: string, route: RouteKind, body: Record<string, any>, context = ctx({ route })): UpstreamRequest {
  const adapter = createCompatibleAdapter(row(id));
  const request = adapter.routes[route]?.buildRequest(body, context);
  if (!request || request instanceof Promise) throw new Error("expected a synchronous request");
  return request;
}

const sent = (request: UpstreamRequest) => JSON.parse(String(request.body));

describe("compatible provider table", () => {
  const LOCAL = new Set(["ollama", "lm-studio"]);
  const KINDS: RouteKind[] = ["chat", "completions", "embeddings", "models", "responses", ...MEDIA_ROUTES];

  it("has 35+ rows with unique lower-case kebab ids and names", () => {
    expect(COMPATIBLE_PROVIDERS.length).toBeGreaterThanOrEqual(35);
    const ids = COMPATIBLE_PROVIDERS.map((provider) => provider.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const provider of COMPATIBLE_PROVIDERS) {
      expect(provider.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(provider.name.trim()).not.toBe("");
    }
  });

  it("uses https base URLs without trailing slash, except local runtimes on localhost", () => {
    for (const provider of COMPATIBLE_PROVIDERS) {
      if (provider.baseUrl === undefined) continue;
      expect(provider.baseUrl, provider.id).not.toMatch(/\/$/);
      if (LOCAL.has(provider.id)) expect(provider.baseUrl).toMatch(/^http:\/\/localhost:\d+\/v1$/);
      else expect(provider.baseUrl, provider.id).toMatch(/^https:\/\/[a-z0-9.-]+\.[a-z]+(\/|$)/);
    }
    expect(row("ollama").baseUrl).toBe("http://localhost:11434/v1");
    expect(row("lm-studio").baseUrl).toBe("http://localhost:1234/v1");
    expect(row("ollama").auth).toBe("none");
  });

  it("declares non-empty, known, distinct routes and https docs", () => {
    for (const provider of COMPATIBLE_PROVIDERS) {
      expect(provider.routes.length, provider.id).toBeGreaterThan(0);
      expect(new Set(provider.routes).size).toBe(provider.routes.length);
      for (const kind of provider.routes) expect(KINDS).toContain(kind);
      if (provider.docs) expect(provider.docs).toMatch(/^https:\/\//);
    }
    expect(row("voyage").routes).toEqual(["embeddings", "rerank"]);
    expect(row("jina").routes).toEqual(["embeddings", "rerank"]);
  });

  it("leaves only self-hosted / account-scoped rows without a default base URL", () => {
    const hostless = COMPATIBLE_PROVIDERS.filter((provider) => !provider.baseUrl).map((provider) => provider.id);
    expect(hostless.sort()).toEqual(["openai-compatible", "vllm", "workers-ai"]);
  });

  it("never drops and renames the same field", () => {
    for (const provider of COMPATIBLE_PROVIDERS) {
      const renamed = Object.keys(provider.renameParams ?? {});
      for (const name of provider.dropParams ?? []) expect(renamed, provider.id).not.toContain(name);
    }
  });

  it("builds a request for every row and route", async () => {
    for (const provider of COMPATIBLE_PROVIDERS) {
      const adapter = createCompatibleAdapter(provider);
      expect(adapter.id).toBe(provider.id);
      for (const kind of provider.routes) {
        const context = ctx({
          route: kind,
          target: { provider: provider.id, customHost: provider.baseUrl ? undefined : "https://llm.internal/v1" },
        });
        const request = (await adapter.routes[kind]?.buildRequest(
          { model: "m", messages: [], input: "x", prompt: "x" },
          context,
        )) as UpstreamRequest;
        const base = provider.baseUrl ?? "https://llm.internal/v1";
        expect(request.url).toBe(`${base}${ROUTE_PATHS[kind]}`);
        expect(request.method).toBe(kind === "models" ? "GET" : "POST");
        const streams = ["chat", "completions", "responses", "messages"].includes(kind);
        expect(Boolean(adapter.routes[kind]?.stream)).toBe(streams);
        // Chat chunks are relayed as bytes; Responses events are parsed (for usage) and re-framed.
        expect(adapter.routes[kind]?.stream?.relay === true).toBe(kind === "chat" || kind === "completions");
      }
    }
  });
});

describe("request building", () => {
  it("sends OpenAI bodies untouched: logprobs, tools, unknown extra fields", () => {
    const body = json("chat-request.json");
    const request = build("openai", "chat", body);
    expect(request.url).toBe("https://api.openai.com/v1/chat/completions");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(sent(request)).toEqual(body);
    expect(sent(request).x_vendor_extension).toEqual({ keep: "me" });
  });

  it("does not mutate the client body", () => {
    const body = json("chat-request.json");
    const copy = structuredClone(body);
    build("mistral-ai", "chat", body, ctx({ stream: true }));
    build("groq", "chat", body, ctx({ stream: true }));
    expect(body).toEqual(copy);
  });

  it("removes a row's dropParams and keeps the rest", () => {
    const body = json("chat-request.json");
    const groq = sent(build("groq", "chat", body));
    expect(groq).not.toHaveProperty("logprobs");
    expect(groq).not.toHaveProperty("top_logprobs");
    expect(groq).not.toHaveProperty("logit_bias");
    expect(groq.tools).toEqual(body.tools);
    expect(groq.seed).toBe(42);

    const cerebras = sent(build("cerebras", "chat", body));
    for (const name of ["frequency_penalty", "presence_penalty", "logit_bias", "parallel_tool_calls", "service_tier"]) {
      expect(cerebras).not.toHaveProperty(name);
    }
    expect(cerebras.logprobs).toBe(true);
  });

  it("renames fields (Mistral seed -> random_seed, max_completion_tokens -> max_tokens)", () => {
    const body = json("chat-request.json");
    const mistral = sent(build("mistral-ai", "chat", body));
    expect(mistral.random_seed).toBe(42);
    expect(mistral.max_tokens).toBe(256);
    expect(mistral).not.toHaveProperty("seed");
    expect(mistral).not.toHaveProperty("max_completion_tokens");
    expect(mistral).not.toHaveProperty("logprobs");
    expect(mistral.tools).toEqual(body.tools);
  });

  it("lets the provider's own name win over a renamed OpenAI field", () => {
    const out = prepareCompatibleBody(
      { renameParams: { seed: "random_seed" } },
      { seed: 1, random_seed: 7 },
      { stream: false, includeUsage: false },
      "chat",
    );
    expect(out).toEqual({ random_seed: 7 });
  });

  it("renames Mistral's embedding size", () => {
    const mistral = sent(
      build(
        "mistral-ai",
        "embeddings",
        { model: "codestral-embed", input: "a", dimensions: 512 },
        ctx({ route: "embeddings" }),
      ),
    );
    expect(mistral).toEqual({ model: "codestral-embed", input: "a", output_dimension: 512 });
  });

  it("renames Voyage's output_dimension on embeddings", () => {
    const voyage = sent(
      build(
        "voyage",
        "embeddings",
        { model: "voyage-3.5", input: ["a"], dimensions: 256, input_type: "query" },
        ctx({ route: "embeddings" }),
      ),
    );
    expect(voyage).toEqual({ model: "voyage-3.5", input: ["a"], output_dimension: 256, input_type: "query" });
  });

  it("returns the very same body when nothing applies", () => {
    const body = { model: "m", messages: [] };
    expect(prepareCompatibleBody(row("openai"), body, { stream: false, includeUsage: false }, "chat")).toBe(body);
  });
});

describe("stream_options", () => {
  const body = { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], stream: true };

  it("asks for usage when the client streams without asking", () => {
    const out = sent(build("openai", "chat", body, ctx({ stream: true })));
    expect(out.stream_options).toEqual({ include_usage: true });
  });

  it("keeps the client's other stream_options keys", () => {
    const out = sent(
      build("openai", "chat", { ...body, stream_options: { include_obfuscation: false } }, ctx({ stream: true })),
    );
    expect(out.stream_options).toEqual({ include_obfuscation: false, include_usage: true });
  });

  it("leaves the body alone when the client asked for usage itself", () => {
    const own = { ...body, stream_options: { include_usage: true } };
    expect(sent(build("openai", "chat", own, ctx({ stream: true, includeUsage: true })))).toEqual(own);
  });

  it("injects nothing on non-streamed requests or on embeddings", () => {
    expect(sent(build("openai", "chat", { ...body, stream: false }))).not.toHaveProperty("stream_options");
    const embed = sent(
      build("openai", "embeddings", { model: "e", input: "x" }, ctx({ route: "embeddings", stream: true })),
    );
    expect(embed).not.toHaveProperty("stream_options");
  });

  it("injects on streamed text completions too", () => {
    const out = sent(
      build(
        "openai",
        "completions",
        { model: "i", prompt: "x", stream: true },
        ctx({ route: "completions", stream: true }),
      ),
    );
    expect(out.stream_options).toEqual({ include_usage: true });
  });

  it("never sends stream_options to a row that rejects it, even the client's own", () => {
    expect(sent(build("mistral-ai", "chat", body, ctx({ stream: true })))).not.toHaveProperty("stream_options");
    const own = { ...body, stream_options: { include_usage: true } };
    expect(sent(build("mistral-ai", "chat", own, ctx({ stream: true, includeUsage: true })))).not.toHaveProperty(
      "stream_options",
    );
  });
});

describe("auth, headers and hosts", () => {
  it("supports bearer, api-key header and no auth", () => {
    expect(authHeaders({ auth: "bearer" }, "k")).toEqual({ authorization: "Bearer k" });
    expect(authHeaders({ auth: "api-key-header" }, "k")).toEqual({ "api-key": "k" });
    expect(authHeaders({ auth: "none" }, "k")).toEqual({});
    expect(authHeaders({ auth: "bearer" }, undefined)).toEqual({});
  });

  it("sends the key, static headers and forwarded headers", () => {
    const adapter = createCompatibleAdapter({
      id: "x",
      name: "X",
      baseUrl: "https://x.example/v1",
      auth: "api-key-header",
      routes: ["chat"],
      headers: { "x-static": "1" },
    });
    const request = adapter.routes.chat?.buildRequest(
      { model: "m", messages: [] },
      ctx({ target: { apiKey: "secret", forwardHeaders: { "x-trace": "abc" } } }),
    ) as UpstreamRequest;
    expect(request.headers).toMatchObject({ "api-key": "secret", "x-static": "1", "x-trace": "abc" });
    expect(request.headers).not.toHaveProperty("authorization");
  });

  it("sends no credentials to local runtimes", () => {
    const request = build("ollama", "chat", { model: "llama3.2", messages: [] });
    expect(request.url).toBe("http://localhost:11434/v1/chat/completions");
    expect(request.headers).not.toHaveProperty("authorization");
  });

  it("replaces the base URL with the custom host", () => {
    const request = build(
      "groq",
      "chat",
      { model: "m", messages: [] },
      ctx({ target: { customHost: "http://127.0.0.1:8080/openai/v1/" } }),
    );
    expect(request.url).toBe("http://127.0.0.1:8080/openai/v1/chat/completions");
  });

  it("lists models with a GET and no body", () => {
    const request = build("openai", "models", {}, ctx({ route: "models" }));
    expect(request).toEqual({
      url: "https://api.openai.com/v1/models",
      method: "GET",
      headers: { authorization: "Bearer sk-test" },
    });
  });

  it("asks for a custom host on rows without a default", () => {
    for (const id of ["vllm", "workers-ai", "openai-compatible"]) {
      let error: unknown;
      try {
        build(id, "chat", { model: "m", messages: [] });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).status).toBe(400);
      expect((error as UpstreamError).code).toBe("custom_host_required");
    }
    const cf = "https://api.cloudflare.com/client/v4/accounts/0123abcd/ai/v1";
    expect(
      build(
        "workers-ai",
        "chat",
        { model: "@cf/meta/llama-3.1-8b-instruct", messages: [] },
        ctx({ target: { customHost: cf } }),
      ).url,
    ).toBe(`${cf}/chat/completions`);
  });
});

describe("responses and streams", () => {
  it("returns OpenAI answers as they came (logprobs, tool calls, system_fingerprint)", () => {
    const adapter = createCompatibleAdapter(row("openai"));
    for (const [route, name] of [
      ["chat", "chat-completion.json"],
      ["completions", "completion.json"],
      ["embeddings", "embeddings.json"],
    ] as const) {
      const upstream = json(name);
      expect(adapter.routes[route]?.transformResponse(upstream, ctx({ route }))).toBe(upstream);
    }
  });

  it("passes stream chunks through as strings and drops [DONE]", async () => {
    const events = await collect(decodeSse(single(readFileSync(fixture("chat-stream.sse")))));
    const transformer = passthroughTransformer();
    const out = events.flatMap((event) => transformer.push(event)).concat(transformer.end());
    expect(out).toHaveLength(5);
    for (const chunk of out) expect(typeof chunk).toBe("string");
    expect(JSON.parse(out[1] as string).choices[0].delta.content).toBe("Bonjour");
    expect(JSON.parse(out[4] as string)).toMatchObject({ choices: [], usage: { total_tokens: 14 } });
  });
});

describe("against the mock OpenAI upstream", () => {
  let mock: OpenAIMock;
  beforeAll(async () => {
    mock = await startOpenAIMock();
  });
  afterAll(() => mock.close());
  beforeEach(() => {
    mock.reset();
    mock.options = {};
  });

  async function call(
    route: RouteKind,
    body: Record<string, any>,
    context = ctx({ route, target: { customHost: `${mock.url}/v1` } }),
  ) {
    const request = build("openai", route, body, context);
    return fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body as string | undefined,
    });
  }

  it("answers chat JSON and records what the gateway sent", async () => {
    const body = json("chat-request.json");
    const response = await call("chat", body);
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer).toMatchObject({
      object: "chat.completion",
      system_fingerprint: "fp_mock",
      choices: [{ finish_reason: "tool_calls" }],
    });
    expect(answer.choices[0].message.tool_calls[0].function.name).toBe("get_weather");
    expect(answer.choices[0].logprobs).not.toBeNull();
    expect(mock.lastRequest()?.path).toBe("/v1/chat/completions");
    expect(mock.lastRequest()?.headers.authorization).toBe("Bearer sk-test");
    expect(mock.lastRequest()?.json()).toEqual(body);
  });

  it("streams chunks with a usage chunk when include_usage is injected", async () => {
    mock.options = { reply: "one two three" };
    const context = ctx({ stream: true, target: { customHost: `${mock.url}/v1` } });
    const response = await call(
      "chat",
      { model: "m", messages: [{ role: "user", content: "hi" }], stream: true },
      context,
    );
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = await collect(decodeSse(response.body as AsyncIterable<Uint8Array>));
    const transformer = passthroughTransformer();
    const chunks = events.flatMap((event) => transformer.push(event)).map((chunk) => JSON.parse(chunk as string));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("")).toBe("one two three");
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 3 } });
    expect(events.at(-1)?.data).toBe("[DONE]");
  });

  it("streams without a usage chunk when nobody asked", async () => {
    const response = await call(
      "chat",
      { model: "m", messages: [], stream: true },
      ctx({ stream: true, includeUsage: true, target: { customHost: mock.url } }),
    );
    const events = await collect(decodeSse(response.body as AsyncIterable<Uint8Array>));
    expect(events.some((event) => event.data.includes('"usage"'))).toBe(false);
  });

  it("serves text completions, embeddings (float and base64) and models", async () => {
    const completion = await (
      await call(
        "completions",
        { model: "i", prompt: "say hi" },
        ctx({ route: "completions", target: { customHost: mock.url } }),
      )
    ).json();
    expect(completion).toMatchObject({ object: "text_completion", choices: [{ finish_reason: "stop" }] });

    const floats = await (
      await call(
        "embeddings",
        { model: "e", input: ["a", "b"], dimensions: 4 },
        ctx({ route: "embeddings", target: { customHost: mock.url } }),
      )
    ).json();
    expect(floats.data).toHaveLength(2);
    expect(floats.data[0].embedding).toHaveLength(4);
    const base64 = await (
      await call(
        "embeddings",
        { model: "e", input: "a", dimensions: 4, encoding_format: "base64" },
        ctx({ route: "embeddings", target: { customHost: mock.url } }),
      )
    ).json();
    const decoded = Array.from(
      new Float32Array(Uint8Array.from(Buffer.from(base64.data[0].embedding, "base64")).buffer),
    );
    expect(decoded.map((value) => Math.round(value * 1e4) / 1e4)).toEqual(floats.data[0].embedding);

    const models = await (await call("models", {}, ctx({ route: "models", target: { customHost: mock.url } }))).json();
    expect(models.data.map((model: any) => model.id)).toContain("mock-model");
  });

  it("plays faults: status codes for N requests, malformed JSON, mid-stream failure", async () => {
    mock.setFault({ status: 429, times: 1 });
    expect((await call("chat", { model: "m", messages: [] })).status).toBe(429);
    expect((await call("chat", { model: "m", messages: [] })).status).toBe(200);

    mock.setFault({ malformedJson: true });
    const broken = await call("chat", { model: "m", messages: [] });
    await expect(broken.json()).rejects.toThrow();

    mock.setFault({ streamFailAfter: 2, streamFailure: "error-event" });
    const errored = await call(
      "chat",
      { model: "m", messages: [], stream: true },
      ctx({ stream: true, target: { customHost: mock.url } }),
    );
    const events = await collect(decodeSse(errored.body as AsyncIterable<Uint8Array>));
    expect(events).toHaveLength(3);
    expect(JSON.parse(events[2].data).error.code).toBe("stream_error");

    mock.setFault({ streamFailAfter: 1 });
    const cut = await call(
      "chat",
      { model: "m", messages: [], stream: true },
      ctx({ stream: true, target: { customHost: mock.url } }),
    );
    await expect(collect(decodeSse(cut.body as AsyncIterable<Uint8Array>))).rejects.toThrow();
  });

  it("paces stream chunks when asked", async () => {
    mock.options = { reply: "a b c d", chunkDelayMs: 40 };
    const started = Date.now();
    const response = await call(
      "chat",
      { model: "m", messages: [], stream: true },
      ctx({ stream: true, target: { customHost: mock.url } }),
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    const firstAt = Date.now() - started;
    while (!(await reader.read()).done) {
      /* drain */
    }
    expect(first.done).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(firstAt + 150);
  });
});

describe("registry", () => {
  it("registers every table row, Azure and Cohere, 40+ providers in all", async () => {
    const { PROVIDER_IDS, loadProvider, loadAllProviders, providerIdOf } = await import(
      "../../../core/providers/registry.ts"
    );
    expect(PROVIDER_IDS.length).toBeGreaterThanOrEqual(40);
    for (const provider of COMPATIBLE_PROVIDERS) expect((await loadProvider(provider.id))?.name).toBe(provider.name);
    for (const id of ["azure-openai", "azure-ai", "cohere"]) expect((await loadProvider(id))?.id).toBe(id);
    expect((await loadProvider("Mistral-AI"))?.id).toBe("mistral-ai");
    expect(providerIdOf("Mistral-AI")).toBe("mistral-ai");
    expect(providerIdOf("nope")).toBeUndefined();
    expect(await loadProvider("nope")).toBeUndefined();
    // Every id loads, to the adapter of that id.
    expect((await loadAllProviders()).map((adapter) => adapter.id)).toEqual(PROVIDER_IDS);
  });
});
