import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import type { MockServer } from "../helpers/mock-server.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * /v1/messages as Anthropic's clients speak it (issue 40 items 1 and 6): the provider key in `x-api-key` (how the
 * Anthropic SDK, @ai-sdk/anthropic, LangChain's ChatAnthropic and Claude Code with ANTHROPIC_API_KEY send it)
 * reaches the target in its own auth form and never mixes with the gateway's key; every error of the route comes
 * in Anthropic's shape, `{"type": "error", "error": {"type", "message"}}`, so the SDK raises its typed errors.
 */

const MAX_BODY = 256 * 1024;
let gateway: TestGateway;
let anthropicMock: AnthropicMock;
let openaiMock: OpenAIMock;
const mocks: MockServer[] = [];

beforeAll(async () => {
  gateway = await startTestGateway({ GATEWAY_MAX_JSON_BODY_BYTES: String(MAX_BODY) });
  anthropicMock = await startAnthropicMock();
  openaiMock = await startOpenAIMock({ reply: "Hello from chat." });
  mocks.push(anthropicMock, openaiMock);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all(mocks.map((mock) => mock.close()));
});

const anthropicTarget = () => ({ "x-gateway-provider": "anthropic", "x-gateway-custom-host": anthropicMock.url });
const openaiTarget = () => ({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${openaiMock.url}/v1` });

/** An Anthropic SDK client as users write it: the provider key as `apiKey` (sent as x-api-key). */
function client(apiKey: string, headers: Record<string, string>, gatewayKey = gateway.adminKey): Anthropic {
  return new Anthropic({
    apiKey,
    baseURL: gateway.url,
    defaultHeaders: { "x-gateway-api-key": gatewayKey, ...headers },
    maxRetries: 0,
  });
}

const ask = { model: "claude-sonnet-4-6", max_tokens: 64, messages: [{ role: "user" as const, content: "Hi" }] };

/** Every header value a mock received, flattened: a secret must be in none of them. */
const headerValues = (mock: MockServer) =>
  mock.requests.flatMap((request) => Object.values(request.headers).flat().map(String));

async function postMessage(headers: Record<string, string>, body: unknown) {
  const response = await fetch(`${gateway.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe("the provider key as Anthropic's clients send it", () => {
  it("x-api-key reaches Anthropic as x-api-key and a translated provider as its bearer token", async () => {
    anthropicMock.requests.length = 0;
    const message = await client("sk-ant-client-key", anthropicTarget()).messages.create(ask);
    expect(message.type).toBe("message");
    expect(anthropicMock.requests.at(-1)!.headers["x-api-key"]).toBe("sk-ant-client-key");

    openaiMock.reset();
    const translated = await client("sk-openai-client-key", openaiTarget()).messages.create({
      ...ask,
      model: "gpt-4o-mini",
    });
    expect(translated.content[0]).toMatchObject({ type: "text", text: "Hello from chat." });
    const sent = openaiMock.lastRequest()!.headers;
    expect(sent.authorization).toBe("Bearer sk-openai-client-key");
    expect(sent["x-api-key"]).toBeUndefined();
    // The gateway's own key went nowhere upstream.
    expect(headerValues(anthropicMock).some((value) => value.includes(gateway.adminKey))).toBe(false);
    expect(headerValues(openaiMock).some((value) => value.includes(gateway.adminKey))).toBe(false);
  });

  it("count_tokens takes the key the same way", async () => {
    anthropicMock.requests.length = 0;
    const count = await client("sk-ant-count", anthropicTarget()).messages.countTokens({
      model: ask.model,
      messages: ask.messages,
    });
    expect(count.input_tokens).toBeGreaterThan(0);
    expect(anthropicMock.requests.at(-1)!.headers["x-api-key"]).toBe("sk-ant-count");
  });

  it("x-api-key wins over Authorization; a config's own api_key wins over both", async () => {
    anthropicMock.requests.length = 0;
    await postMessage(
      {
        "x-gateway-api-key": gateway.adminKey,
        ...anthropicTarget(),
        "x-api-key": "sk-x",
        authorization: "Bearer sk-b",
      },
      ask,
    );
    expect(anthropicMock.requests.at(-1)!.headers["x-api-key"]).toBe("sk-x");
    const config = { provider: "anthropic", api_key: "sk-from-config", custom_host: anthropicMock.url };
    await postMessage(
      { "x-gateway-api-key": gateway.adminKey, "x-gateway-config": JSON.stringify(config), "x-api-key": "sk-x" },
      ask,
    );
    expect(anthropicMock.requests.at(-1)!.headers["x-api-key"]).toBe("sk-from-config");
  });

  it("the gateway's key is never a provider key: in x-api-key or Authorization it stays home", async () => {
    anthropicMock.requests.length = 0;
    // A client that put its gateway key in ANTHROPIC_API_KEY too: Anthropic gets no key (and answers 401).
    await expect(client(gateway.adminKey, anthropicTarget()).messages.create(ask)).rejects.toBeInstanceOf(
      Anthropic.AuthenticationError,
    );
    await postMessage(
      { "x-gateway-api-key": gateway.adminKey, ...anthropicTarget(), authorization: `Bearer ${gateway.adminKey}` },
      ask,
    );
    expect(anthropicMock.requests).toHaveLength(2);
    for (const request of anthropicMock.requests) expect(request.headers["x-api-key"]).toBeUndefined();
    expect(headerValues(anthropicMock).some((value) => value.includes(gateway.adminKey))).toBe(false);
  });
});

describe("errors on /v1/messages are Anthropic's", () => {
  const anthropicError = (text: string) => {
    const body = JSON.parse(text);
    expect(Object.keys(body)).toContain("type");
    expect(body.type).toBe("error");
    expect(typeof body.error.message).toBe("string");
    return body.error.type as string;
  };

  it("authentication, validation, a missing provider, an unknown saved provider, a body too large, a wrong method", async () => {
    const noKey = await postMessage(anthropicTarget(), ask);
    expect(noKey.status).toBe(401);
    expect(anthropicError(noKey.text)).toBe("authentication_error");
    await expect(client("k", anthropicTarget(), "gk-not-a-key").messages.create(ask)).rejects.toBeInstanceOf(
      Anthropic.AuthenticationError,
    );

    const invalid = client("k", anthropicTarget()).messages.create({ ...ask, max_tokens: 0 });
    await expect(invalid).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(invalid).rejects.toMatchObject({ error: { type: "error", error: { type: "invalid_request_error" } } });

    const unnamed = await postMessage({ "x-gateway-api-key": gateway.adminKey }, ask);
    expect(unnamed.status).toBe(400);
    expect(anthropicError(unnamed.text)).toBe("invalid_request_error");

    const unknownSaved = client("k", { "x-gateway-provider": "@no-such-provider" }).messages.create(ask);
    await expect(unknownSaved).rejects.toBeInstanceOf(Anthropic.NotFoundError);

    const tooLarge = await postMessage(
      { "x-gateway-api-key": gateway.adminKey, ...anthropicTarget() },
      { ...ask, system: "x".repeat(MAX_BODY + 1) },
    );
    expect(tooLarge.status).toBe(413);
    expect(anthropicError(tooLarge.text)).toBe("request_too_large");

    const get = await fetch(`${gateway.url}/v1/messages`, { headers: { "x-gateway-api-key": gateway.adminKey } });
    expect(get.status).toBe(405);
    expect(anthropicError(await get.text())).toBe("invalid_request_error");
  });

  it("a rate-limit policy's 429 is a rate_limit_error", async () => {
    const workspace = await seedWorkspace(gateway, "Messages limits");
    const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "limited",
      workspace_id: workspace.id,
      scopes: ["completions.write"],
    });
    const policy = await call(gateway, gateway.adminKey, "POST", "/v2/policies/rate-limits", {
      workspace_id: workspace.id,
      type: "requests",
      unit: "rpm",
      value: 1,
    });
    expect(policy.status).toBe(201);
    const limited = client("sk-ant", anthropicTarget(), key.key);
    await limited.messages.create(ask);
    const refused = limited.messages.create(ask);
    await expect(refused).rejects.toBeInstanceOf(Anthropic.RateLimitError);
    await expect(refused).rejects.toMatchObject({ error: { error: { type: "rate_limit_error" } } });
  });

  it("a guardrail's 446 keeps Portkey's hook_results beside Anthropic's error", async () => {
    const config = {
      provider: "anthropic",
      custom_host: anthropicMock.url,
      input_guardrails: [{ "default.regexMatch": { rule: "(?i)password", not: true }, deny: true }],
    };
    const denied = await postMessage(
      { "x-gateway-api-key": gateway.adminKey, "x-gateway-config": JSON.stringify(config), "x-api-key": "sk-ant" },
      { ...ask, messages: [{ role: "user", content: "my password" }] },
    );
    expect(denied.status).toBe(446);
    expect(anthropicError(denied.text)).toBe("invalid_request_error");
    expect(JSON.parse(denied.text).hook_results.before_request_hooks[0].verdict).toBe(false);
  });

  it("upstream failures keep Anthropic's type (native) or get the one of their status (translated)", async () => {
    anthropicMock.setScenario("overloaded");
    try {
      const overloaded = client("sk-ant", anthropicTarget()).messages.create(ask);
      await expect(overloaded).rejects.toMatchObject({ status: 529, error: { error: { type: "overloaded_error" } } });
    } finally {
      anthropicMock.setScenario("auto");
    }
    openaiMock.setFault({ status: 500, times: 1 });
    const failed = await postMessage(
      { "x-gateway-api-key": gateway.adminKey, ...openaiTarget(), "x-api-key": "sk-openai" },
      { ...ask, model: "gpt-4o-mini" },
    );
    expect(failed.status).toBe(500);
    expect(anthropicError(failed.text)).toBe("api_error");
    openaiMock.setFault({ status: 429, times: 1 });
    const limited = client("sk-openai", openaiTarget()).messages.create({ ...ask, model: "gpt-4o-mini" });
    await expect(limited).rejects.toBeInstanceOf(Anthropic.RateLimitError);
  });

  it("a stream that fails after its first event ends with Anthropic's `event: error`", async () => {
    anthropicMock.setScenario("overloaded");
    try {
      const native = await postMessage(
        { "x-gateway-api-key": gateway.adminKey, ...anthropicTarget(), "x-api-key": "sk-ant" },
        { ...ask, stream: true },
      );
      expect(native.status).toBe(200);
      expect(native.text).toContain("event: content_block_delta");
      expect(native.text.trimEnd().split("\n\n").at(-1)).toBe(
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
      );
      const stream = client("sk-ant", anthropicTarget()).messages.stream(ask);
      await expect(stream.finalMessage()).rejects.toMatchObject({ error: { error: { type: "overloaded_error" } } });
    } finally {
      anthropicMock.setScenario("auto");
    }

    openaiMock.setFault({ streamFailAfter: 2, times: 1 });
    const translated = await postMessage(
      { "x-gateway-api-key": gateway.adminKey, ...openaiTarget(), "x-api-key": "sk-openai" },
      { ...ask, model: "gpt-4o-mini", stream: true },
    );
    expect(translated.status).toBe(200);
    const last = translated.text.trimEnd().split("\n\n").at(-1)!;
    expect(last.split("\n")[0]).toBe("event: error");
    expect(JSON.parse(last.split("\n")[1]!.slice("data: ".length))).toMatchObject({
      type: "error",
      error: { type: "api_error" },
    });
  });
});
