import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FaultUpstream, startFaultUpstream } from "../helpers/fault-upstream.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/** A conditional rule `{query, then}`. */
// biome-ignore lint/suspicious/noThenProperty: `then` is the config format's name for the chosen target.
const when = (query: unknown, target: string) => ({ query, then: target });

/**
 * Routing configs end to end: the official openai client against the local gateway, every target a
 * fault-injecting mock upstream. Every test is bounded (the client has a timeout and no retries of its own).
 */

let gateway: TestGateway;
let upstream: FaultUpstream;
let client: OpenAI;

const messages = [{ role: "user" as const, content: "Hi" }];

beforeAll(async () => {
  upstream = await startFaultUpstream();
  gateway = await startTestGateway();
  client = new OpenAI({
    apiKey: "sk-client-key",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey },
    maxRetries: 0,
    timeout: 15_000,
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => {
  upstream.retryAfterMs = 0;
});

const target = (behaviour: string, extra: Record<string, unknown> = {}) => ({
  provider: "openai",
  api_key: "sk-target-key",
  custom_host: upstream.host(behaviour),
  ...extra,
});

const withConfig = (config: unknown, headers: Record<string, string> = {}) => ({
  headers: { "x-gateway-config": typeof config === "string" ? config : JSON.stringify(config), ...headers },
});

async function chat(
  config: unknown,
  options: { headers?: Record<string, string>; body?: Record<string, unknown> } = {},
) {
  const { data, response } = await client.chat.completions
    .create(
      { model: "gpt-4o-mini", messages, ...options.body } as OpenAI.ChatCompletionCreateParamsNonStreaming,
      withConfig(config, options.headers),
    )
    .withResponse();
  return { content: data.choices[0]!.message.content, headers: response.headers };
}

async function chatError(
  config: unknown,
  options: { headers?: Record<string, string>; body?: Record<string, unknown> } = {},
) {
  const error = await client.chat.completions
    .create(
      { model: "gpt-4o-mini", messages, ...options.body } as OpenAI.ChatCompletionCreateParamsNonStreaming,
      withConfig(config, options.headers),
    )
    .then(() => undefined)
    .catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError> & { headers: Headers };
}

describe("fallback", () => {
  it("moves on over 5xx, 429, connection reset, timeout, malformed JSON and redirects, and reports where it ended", async () => {
    const behaviours = ["500", "502", "503", "429", "reset", "malformed", "redirect"];
    const before = Object.fromEntries([...behaviours, "slow", "ok"].map((name) => [name, upstream.hits(name)]));
    const { content, headers } = await chat({
      strategy: { mode: "fallback" },
      targets: [...behaviours.map((name) => target(name)), target("slow", { request_timeout: 300 }), target("ok")],
    });
    expect(content).toBe("ok");
    expect(headers.get("x-gateway-last-used-option-index")).toBe("config.targets[8]");
    expect(headers.get("x-gateway-retry-attempt-count")).toBe("0");
    expect(headers.get("x-gateway-provider")).toBe("openai");
    expect(headers.get("x-gateway-trace-id")).toBeTruthy();
    for (const name of [...behaviours, "slow", "ok"]) expect(upstream.hits(name) - before[name]!, name).toBe(1);
  });

  it("moves on only for on_status_codes, but always on transport failures", async () => {
    const okBefore = upstream.hits("ok");
    const error = await chatError({
      strategy: { mode: "fallback", on_status_codes: [429] },
      targets: [target("500"), target("ok")],
    });
    expect(error.status).toBe(500);
    expect(error.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[0]");
    expect(upstream.hits("ok")).toBe(okBefore);

    const rateLimited = await chat({
      strategy: { mode: "fallback", on_status_codes: [429] },
      targets: [target("429"), target("ok")],
    });
    expect(rateLimited.content).toBe("ok");
    const timedOut = await chat({
      strategy: { mode: "fallback", on_status_codes: [429] },
      targets: [target("slow", { request_timeout: 200 }), target("reset"), target("ok")],
    });
    expect(timedOut.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[2]");
  });

  it("answers the last failure when every target fails", async () => {
    const error = await chatError({ strategy: { mode: "fallback" }, targets: [target("500"), target("503")] });
    expect(error.status).toBe(503);
    expect(error.error).toMatchObject({ code: "upstream_503" });
    expect(error.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
  });

  it("moves on when a stream fails before its first chunk, never after", async () => {
    const config = { strategy: { mode: "fallback" }, targets: [target("stream-before"), target("ok")] };
    const stream = await client.chat.completions.create(
      { model: "gpt-4o-mini", messages, stream: true },
      withConfig(config),
    );
    let text = "";
    for await (const part of stream) text += part.choices[0]?.delta?.content ?? "";
    expect(text).toBe("ok");

    const okBefore = upstream.hits("ok");
    const late = await client.chat.completions.create(
      { model: "gpt-4o-mini", messages, stream: true },
      withConfig({ strategy: { mode: "fallback" }, targets: [target("stream-after"), target("ok")] }),
    );
    let partial = "";
    const failure = await (async () => {
      for await (const part of late) partial += part.choices[0]?.delta?.content ?? "";
    })().catch((caught: unknown) => caught);
    expect(partial).toBe("partial");
    expect(failure).toBeInstanceOf(Error);
    expect(upstream.hits("ok")).toBe(okBefore);
  });
});

describe("retries", () => {
  it("retries the configured codes with backoff and reports the count", async () => {
    const { content, headers } = await chat({ retry: { attempts: 3 }, ...target("flaky-a-2") });
    expect(content).toBe("flaky");
    expect(headers.get("x-gateway-retry-attempt-count")).toBe("2");
    expect(upstream.hits("flaky-a-2")).toBe(3);
  });

  it("stops after the attempts and does not retry other codes", async () => {
    const exhausted = await chatError({ retry: { attempts: 2 }, ...target("flaky-b-5") });
    expect(exhausted.status).toBe(503);
    expect(exhausted.headers.get("x-gateway-retry-attempt-count")).toBe("2");
    expect(upstream.hits("flaky-b-5")).toBe(3);

    const before = upstream.hits("500");
    const other = await chatError({ retry: { attempts: 3, on_status_codes: [429] }, ...target("500") });
    expect(other.status).toBe(500);
    expect(upstream.hits("500") - before).toBe(1);
  });

  it("honours retry-after-ms when asked, and gives up when the hint is beyond the cap", async () => {
    upstream.retryAfterMs = 700;
    let started = Date.now();
    const hinted = await chatError({ retry: { attempts: 1, use_retry_after_header: true }, ...target("429") });
    expect(hinted.status).toBe(429);
    expect(hinted.headers.get("x-gateway-retry-attempt-count")).toBe("1");
    expect(Date.now() - started).toBeGreaterThanOrEqual(690);

    started = Date.now();
    await chatError({ retry: { attempts: 1 }, ...target("429") });
    expect(Date.now() - started).toBeLessThan(690);

    upstream.retryAfterMs = 600_000;
    const before = upstream.hits("429");
    started = Date.now();
    const capped = await chatError({ retry: { attempts: 3, use_retry_after_header: true }, ...target("429") });
    expect(capped.headers.get("x-gateway-retry-attempt-count")).toBe("0");
    expect(upstream.hits("429") - before).toBe(1);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("inherits the retry policy of a parent into nested targets", async () => {
    const { headers } = await chat({
      strategy: { mode: "fallback" },
      retry: { attempts: 2 },
      targets: [{ strategy: { mode: "single" }, targets: [target("flaky-c-1")] }],
    });
    expect(headers.get("x-gateway-retry-attempt-count")).toBe("1");
    expect(headers.get("x-gateway-last-used-option-index")).toBe("config.targets[0].targets[0]");
  });
});

describe("timeouts", () => {
  it("answers 408 for x-gateway-request-timeout and the config's request_timeout", async () => {
    const started = Date.now();
    const byHeader = await chatError(target("slow"), { headers: { "x-gateway-request-timeout": "250" } });
    expect(byHeader.status).toBe(408);
    expect(byHeader.error).toMatchObject({ type: "timeout_error", code: "request_timeout" });
    const byConfig = await chatError({ request_timeout: 250, ...target("slow") });
    expect(byConfig.status).toBe(408);
    expect(Date.now() - started).toBeLessThan(1800);
  });
});

describe("loadbalance and conditional", () => {
  it("never chooses a target of weight 0", async () => {
    const config = {
      strategy: { mode: "loadbalance" },
      targets: [target("ok-zero", { weight: 0 }), target("ok-one", { weight: 1 })],
    };
    for (let i = 0; i < 10; i++) expect((await chat(config)).content).toBe("one");
    expect(upstream.hits("ok-zero")).toBe(0);
  });

  it("routes on metadata, params and the URL, with a default", async () => {
    const config = {
      strategy: {
        mode: "conditional",
        conditions: [
          when({ "metadata._user": { $in: ["alice", "bob"] }, "params.temperature": { $gte: 0.5 } }, "premium"),
          when({ $or: [{ "params.model": { $regex: "^o1" } }, { "url.pathname": "/v1/embeddings" }] }, "reasoning"),
        ],
        default: "basic",
      },
      targets: [
        target("ok-premium", { name: "premium" }),
        target("ok-reasoning", { name: "reasoning" }),
        target("ok-basic", { name: "basic" }),
      ],
    };
    const meta = (user: string) => ({ "x-gateway-metadata": JSON.stringify({ _user: user }) });
    expect((await chat(config, { headers: meta("alice"), body: { temperature: 0.7 } })).content).toBe("premium");
    expect((await chat(config, { headers: meta("alice"), body: { temperature: 0.2 } })).content).toBe("basic");
    const reasoning = await chat(config, { headers: meta("carol"), body: { model: "o1-mini" } });
    expect(reasoning.content).toBe("reasoning");
    expect(reasoning.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
  });

  it("nests strategies and reports the path through the tree", async () => {
    const { content, headers } = await chat({
      strategy: { mode: "fallback" },
      targets: [
        { strategy: { mode: "loadbalance" }, targets: [target("503", { weight: 2 }), target("500", { weight: 1 })] },
        {
          strategy: {
            mode: "conditional",
            conditions: [when({ "params.model": "gpt-4o-mini" }, "mini")],
            default: "other",
          },
          targets: [
            target("ok-other", { name: "other" }),
            { name: "mini", strategy: { mode: "fallback" }, targets: [target("reset"), target("ok-mini")] },
          ],
        },
      ],
    });
    expect(content).toBe("mini");
    expect(headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1].targets[1].targets[1]");
  });
});

describe("params and credentials", () => {
  it("applies override_params, default_params and drop_params per target (camelCase accepted)", async () => {
    await chat(
      {
        ...target("ok-params"),
        overrideParams: { model: "forced-model" },
        default_params: { temperature: 0.3, top_p: 0.9 },
        drop_params: ["user"],
      },
      {
        body: { top_p: 0.5, user: "someone" },
      },
    );
    const sent = upstream.requests
      .filter((request) => request.path.startsWith("/ok-params/"))
      .at(-1)!
      .json();
    expect(sent).toMatchObject({ model: "forced-model", temperature: 0.3, top_p: 0.5 });
    expect(sent.user).toBeUndefined();
    expect(upstream.requests.at(-1)!.headers.authorization).toBe("Bearer sk-target-key");
  });

  it("sends the request's Authorization only to targets of the provider the request named", async () => {
    const config = {
      strategy: { mode: "fallback" },
      targets: [
        { provider: "groq", custom_host: upstream.host("500") },
        { provider: "openai", custom_host: upstream.host("ok-auth") },
      ],
    };
    await chat(config, { headers: { "x-gateway-provider": "openai" } });
    const groq = upstream.requests.filter((request) => request.path.startsWith("/500/")).at(-1)!;
    const openai = upstream.requests.filter((request) => request.path.startsWith("/ok-auth/")).at(-1)!;
    expect(groq.headers.authorization).toBeUndefined();
    expect(openai.headers.authorization).toBe("Bearer sk-client-key");
  });

  it("accepts a base64 config and forwards the listed headers, never the sensitive ones", async () => {
    const config = Buffer.from(JSON.stringify({ ...target("ok-b64"), forward_headers: ["x-team"] })).toString("base64");
    await chat(config, {
      headers: {
        "x-team": "search",
        "x-secret": "s",
        "x-gateway-forward-headers": "x-secret",
        "x-gateway-sensitive-headers": "x-secret",
      },
    });
    const sent = upstream.requests.filter((request) => request.path.startsWith("/ok-b64/")).at(-1)!;
    expect(sent.headers["x-team"]).toBe("search");
    expect(sent.headers["x-secret"]).toBeUndefined();
  });
});

describe("config and header errors", () => {
  it.each([
    [{ strategy: { mode: "random" }, targets: [{ provider: "openai" }] }, "x-gateway-config.strategy.mode"],
    [
      { strategy: { mode: "fallback" }, targets: [{ provider: "openai", retry: { attempts: 9 } }] },
      "x-gateway-config.targets[0].retry.attempts",
    ],
    [{ strategy: { mode: "fallback" }, targets: [{ provider: "nope" }] }, "x-gateway-config.targets[0].provider"],
    [
      { strategy: { mode: "fallback" }, targets: [{ provider: "openai", custom_host: "http://10.0.0.1/v1" }] },
      "x-gateway-config.targets[0].custom_host",
    ],
    [
      {
        strategy: { mode: "conditional", conditions: [when({ "metadata.x": "y" }, "missing")] },
        targets: [{ name: "a", provider: "openai" }],
      },
      "x-gateway-config.strategy.conditions[0].then",
    ],
    ["{not json", "x-gateway-config"],
  ])("answers 400 naming the path for %j", async (config, param) => {
    const error = await chatError(config);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param, type: "invalid_request_error" });
  });

  it("answers 404 for a saved config id until the control plane stores configs", async () => {
    const error = await chatError("pc-unknown-123");
    expect(error.status).toBe(404);
    expect(error.error).toMatchObject({ code: "config_not_found" });
  });

  it("answers 400 for metadata beyond the limits", async () => {
    const tooMany = JSON.stringify(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])));
    const error = await chatError(target("ok"), { headers: { "x-gateway-metadata": tooMany } });
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: "x-gateway-metadata", code: "invalid_metadata" });
  });
});
