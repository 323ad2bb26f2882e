import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type TestGateway, apiCaller, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * What a cache entry is keyed by besides the request (issue 38): the resolved target. Within one workspace, an
 * answer is reused only for the same provider account, integration, host and forwarded headers, and a saved
 * integration's model rules are checked before the cache: a model disabled after its answer was cached is
 * refused, never served. The mock upstream records what reached it, so a HIT is an answer it never saw.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
const api = apiCaller(() => gateway);

beforeAll(async () => {
  upstream = await startOpenAIMock({ reply: "Cached answer." });
  gateway = await startTestGateway();
  for (const [slug, key] of [
    ["cache-a", "sk-account-a"],
    ["cache-b", "sk-account-b"],
  ])
    expect(
      (
        await api("POST", "/v1/integrations", {
          name: slug,
          slug,
          ai_provider_id: "openai",
          key,
          configurations: { custom_host: `${upstream.url}/v1` },
        })
      ).status,
    ).toBe(201);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => upstream.reset());

const CACHE = { mode: "simple" };
const keysSeen = () => upstream.requests.map((request) => request.headers.authorization);

let question = 0;
const fresh = () => `Which target answers? (${++question}-${Math.random()})`;

/** One chat request with a config, answered as the cache status (or the error's status and code). */
async function ask(config: Record<string, unknown>, content: string, headers: Record<string, string> = {}) {
  const openai = new OpenAI({
    apiKey: "sk-header-key",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey, "x-gateway-config": JSON.stringify(config), ...headers },
  });
  try {
    const { response } = await openai.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content }] })
      .withResponse();
    return response.headers.get("x-gateway-cache-status");
  } catch (error) {
    if (!(error instanceof OpenAI.APIError)) throw error;
    return `${error.status} ${(error.error as { code?: string } | undefined)?.code}`;
  }
}

describe("the cache key holds the resolved target", () => {
  it("keeps two integrations with different keys apart in one workspace", async () => {
    const content = fresh();
    expect(await ask({ provider: "@cache-a", cache: CACHE }, content)).toBe("MISS");
    expect(await ask({ provider: "@cache-b", cache: CACHE }, content)).toBe("MISS");
    expect(await ask({ provider: "@cache-a", cache: CACHE }, content)).toBe("HIT");
    expect(await ask({ provider: "@cache-b", cache: CACHE }, content)).toBe("HIT");
    expect(keysSeen()).toEqual(["Bearer sk-account-a", "Bearer sk-account-b"]);
  });

  it("keeps provider accounts, custom hosts and forwarded headers apart for inline targets", async () => {
    const content = fresh();
    const inline = (apiKey: string, host = `${upstream.url}/v1`) => ({
      provider: "openai",
      api_key: apiKey,
      custom_host: host,
      cache: CACHE,
    });
    expect(await ask(inline("sk-one"), content)).toBe("MISS");
    expect(await ask(inline("sk-two"), content)).toBe("MISS");
    expect(await ask(inline("sk-one"), content)).toBe("HIT");
    // The same upstream by another name is another host.
    const otherHost = `${upstream.url.replace("127.0.0.1", "localhost")}/v1`;
    expect(await ask(inline("sk-one", otherHost), content)).toBe("MISS");
    const forwarded = (team: string) => ({ "x-gateway-forward-headers": "x-team", "x-team": team });
    expect(await ask(inline("sk-one"), content, forwarded("red"))).toBe("MISS");
    expect(await ask(inline("sk-one"), content, forwarded("blue"))).toBe("MISS");
    expect(await ask(inline("sk-one"), content, forwarded("red"))).toBe("HIT");
    expect(upstream.requests.map((request) => request.headers["x-team"] ?? null)).toEqual([
      null,
      null,
      null,
      "red",
      "blue",
    ]);
  });

  it("keeps pass-through answers of two accounts, and of different forwarded headers, apart", async () => {
    const content = fresh();
    const passthrough = async (slug: string, beta: string) => {
      const response = await fetch(`${gateway.url}/v1/proxy/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "openai-beta": beta,
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-config": JSON.stringify({ provider: `@${slug}`, cache: CACHE }),
        },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
      });
      await response.arrayBuffer();
      return response.headers.get("x-gateway-cache-status");
    };
    expect(await passthrough("cache-a", "v1")).toBe("MISS");
    expect(await passthrough("cache-b", "v1")).toBe("MISS");
    expect(await passthrough("cache-a", "v2")).toBe("MISS");
    expect(await passthrough("cache-a", "v1")).toBe("HIT");
    expect(keysSeen()).toEqual(["Bearer sk-account-a", "Bearer sk-account-b", "Bearer sk-account-a"]);
  });
});

describe("model rules before the cache", () => {
  it("never answers a disabled model from the cache, on chat and pass-through alike", async () => {
    const content = fresh();
    const config = { provider: "@cache-a", cache: CACHE };
    const passthrough = async () => {
      const response = await fetch(`${gateway.url}/v1/proxy/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-config": JSON.stringify(config),
        },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
      });
      const text = await response.text();
      return response.status === 200 ? response.headers.get("x-gateway-cache-status") : `${response.status} ${text}`;
    };
    expect(await ask(config, content)).toBe("MISS");
    expect(await ask(config, content)).toBe("HIT");
    expect(await passthrough()).toBe("MISS");
    expect(await passthrough()).toBe("HIT");
    expect(upstream.requests).toHaveLength(2);

    const disabled = await api("PUT", "/v1/integrations/cache-a/models", {
      models: [{ slug: "gpt-4o-mini", enabled: false }],
    });
    expect(disabled.status).toBe(200);
    expect(await ask(config, content)).toBe("403 model_not_allowed");
    expect(await passthrough()).toMatch(/^403 .*model_not_allowed/);
    // Nothing reached the provider for the refusals either.
    upstream.reset();
    expect(await ask(config, content)).toBe("403 model_not_allowed");
    expect(upstream.requests).toHaveLength(0);

    // Enabled again, the entry (still within max_age) serves once more.
    await api("PUT", "/v1/integrations/cache-a/models", { models: [{ slug: "gpt-4o-mini", enabled: true }] });
    expect(await ask(config, content)).toBe("HIT");
  });
});
