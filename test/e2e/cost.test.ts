import { calcPrice } from "@pydantic/genai-prices";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Cost that matches the invoice, end to end on the local platform with the openai SDK: today's models priced from
 * @pydantic/genai-prices (headers on JSON answers, `usage.cost` on a stream's final chunk, the same cost logged for
 * both), a cost budget that stops a current model once spent (x-usagelimit-* headers on every admitted answer), a
 * model without a price refused under a cost budget (admitted with `unpriced: "allow"`, counted at the stated
 * rate with `"estimate"`, skipped for the next fallback target), and unpriced traffic found with `priced=false`.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let workspaceId: string;

beforeAll(async () => {
  upstream = await startOpenAIMock({ reply: "Hello from a current model." });
  gateway = await startTestGateway();
  workspaceId = (await seedWorkspace(gateway, "Cost")).id;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const admin = (method: string, path: string, body?: unknown) => call(gateway, gateway.adminKey, method, path, body);

async function workspaceKey() {
  return createKey(gateway, gateway.adminKey, "workspace", "service", {
    name: "cost test key",
    workspace_id: workspaceId,
    scopes: ["logs.list", "logs.view", "logs.write"],
  });
}

function client(key: string, extra: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    apiKey: "sk-upstream",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      "x-gateway-api-key": key,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/v1`,
      ...extra,
    },
  });
}

const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "Say hello" }];

async function logsOf(key: string, query: string): Promise<any[]> {
  const answer = await call(gateway, key, "GET", `/v1/logs?limit=100&${query}`);
  return answer.body.data;
}

async function costBudget(keyId: string, extra: Record<string, unknown>) {
  const policy = await admin("POST", "/v2/policies/usage-limits", {
    conditions: [{ key: "api_key", value: keyId }],
    group_by: [{ key: "api_key" }],
    type: "cost",
    ...extra,
  });
  expect(policy.status).toBe(201);
  return policy.body;
}

describe("cost on every answer", () => {
  it("prices a current model from genai-prices: headers on JSON, usage.cost on the stream, one logged cost", async () => {
    const key = await workspaceKey();
    const openai = client(key.key, { "x-gateway-trace-id": "cost-json" });
    const { data: completion, response } = await openai.chat.completions
      .create({ model: "gpt-5.1", messages })
      .withResponse();
    const usage = completion.usage!;
    const expected = calcPrice(
      { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens },
      "gpt-5.1",
      { providerId: "openai" },
    )!.total_price;
    expect(Number(response.headers.get("x-gateway-cost"))).toBeCloseTo(expected, 12);
    expect(Number(response.headers.get("x-gateway-cost-input"))).toBeGreaterThan(0);
    expect(Number(response.headers.get("x-gateway-cost-output"))).toBeGreaterThan(0);
    expect(response.headers.get("x-gateway-cost-source")).toBe("@pydantic/genai-prices 0.1.8 (2026-09-23)");

    const stream = await client(key.key, { "x-gateway-trace-id": "cost-stream" }).chat.completions.create({
      model: "gpt-5.1",
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let final: any;
    for await (const chunk of stream) if (chunk.usage) final = chunk;
    expect(final.choices).toEqual([]);
    expect(final.usage.cost).toBeCloseTo(expected, 12);
    expect(final.usage.cost_details.input + final.usage.cost_details.output).toBeCloseTo(expected, 12);

    // The same request, answered as JSON and as a stream, logs the same cost (with its source and breakdown).
    await expect.poll(async () => (await logsOf(key.key, "model=gpt-5.1")).length).toBe(2);
    const logs = await logsOf(key.key, "model=gpt-5.1");
    const [json, streamed] = ["cost-json", "cost-stream"].map((trace) => logs.find((log) => log.traceId === trace));
    expect(json.cost).toBeCloseTo(expected, 12);
    expect(streamed.cost).toBe(json.cost);
    expect(json.priced).toBe(true);
    expect(json.costDetails.source).toMatchObject({ name: "@pydantic/genai-prices", version: "0.1.8" });
    expect(json.costDetails.components.output).toBeGreaterThan(0);
  });
});

describe("GET /v1/models", () => {
  it("lists today's models with their price, its long-context tiers and the source's name and date", async () => {
    const anthropic = await call(gateway, gateway.adminKey, "GET", "/v1/models?provider=anthropic");
    const sonnet = anthropic.body.data.find((model: any) => model.id === "claude-sonnet-4-5");
    const expected = calcPrice({ input_tokens: 100_000 }, "claude-sonnet-4-5", { providerId: "anthropic" })!;
    expect(sonnet.pricing).toMatchObject({
      currency: "USD",
      input: expected.total_price * 10,
      source: { name: "@pydantic/genai-prices", version: "0.1.8", date: "2026-09-23" },
    });
    expect(sonnet.pricing.tiers[0].above_input_tokens).toBe(200_000);
    expect(sonnet.context_window).toBeGreaterThan(0);
    const openai = await call(gateway, gateway.adminKey, "GET", "/v1/models?provider=openai");
    const ids = openai.body.data.map((model: any) => model.id);
    for (const id of ["gpt-5.5", "gpt-5.4-mini", "gpt-5.1"]) expect(ids).toContain(id);
  });
});

describe("cost budgets", () => {
  it("stop a current model once spent, telling the state on every admitted answer", async () => {
    const key = await workspaceKey();
    const openai = client(key.key);
    const probe = await openai.chat.completions.create({ model: "gpt-5.5", messages });
    const perCallUsd = calcPrice(
      { input_tokens: probe.usage!.prompt_tokens, output_tokens: probe.usage!.completion_tokens },
      "gpt-5.5",
      { providerId: "openai" },
    )!.total_price;
    expect(perCallUsd).toBeGreaterThan(0);
    const policy = await costBudget(key.id, {
      name: "Tiny budget",
      credit_limit: perCallUsd * 2.5,
      periodic_reset: "daily",
    });
    const remaining: number[] = [];
    let refused: any;
    for (let i = 0; i < 5 && !refused; i++) {
      const answer = await openai.chat.completions
        .create({ model: "gpt-5.5", messages })
        .withResponse()
        .catch((error) => error);
      if (answer instanceof OpenAI.APIError) {
        refused = answer;
        break;
      }
      expect(answer.response.headers.get("x-usagelimit-policy")).toBe(policy.id);
      expect(answer.response.headers.get("x-usagelimit-type")).toBe("cost");
      expect(Number(answer.response.headers.get("x-usagelimit-reset"))).toBeGreaterThan(0);
      remaining.push(Number(answer.response.headers.get("x-usagelimit-remaining")));
      // Counted after the answer: wait until it is.
      await expect
        .poll(async () => (await admin("GET", `/v2/policies/usage-limits/${policy.id}/usage`)).body.data?.[0]?.usage)
        .toBeGreaterThanOrEqual(perCallUsd * (i + 1) - 1e-6);
    }
    expect(remaining).toHaveLength(3);
    expect(remaining[0]).toBeGreaterThan(remaining[2]!);
    expect(refused.status).toBe(429);
    expect(refused.code).toBe("usage_limit_exceeded");
    expect(refused.message).toContain("Tiny budget");
    expect(refused.headers.get("x-usagelimit-remaining")).toBe("0");
  });

  it("refuse a model without a price, unless the policy allows or estimates it", async () => {
    const key = await workspaceKey();
    const openai = client(key.key);
    const policy = await costBudget(key.id, { name: "Priced only", credit_limit: 100 });
    expect(policy.unpriced).toBe("deny");
    const refused = await openai.chat.completions.create({ model: "in-house-model-7", messages }).catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused.status).toBe(403);
    expect(refused.code).toBe("unpriced_model_under_cost_limit");
    expect(refused.message).toContain("in-house-model-7");
    expect(refused.message).toContain("Priced only");
    const sentModels = upstream.requests.map((request) => request.body.toString("utf8"));
    expect(sentModels.some((body) => body.includes("in-house-model-7"))).toBe(false);

    // A fallback target whose model has a price answers instead.
    const config = {
      strategy: { mode: "fallback" },
      targets: [
        {
          provider: "openai",
          api_key: "sk-upstream",
          custom_host: `${upstream.url}/v1`,
          override_params: { model: "in-house-model-7" },
        },
        {
          provider: "openai",
          api_key: "sk-upstream",
          custom_host: `${upstream.url}/v1`,
          override_params: { model: "gpt-5.1" },
        },
      ],
    };
    const fallback = await client(key.key, { "x-gateway-config": JSON.stringify(config) })
      .chat.completions.create({ model: "in-house-model-7", messages })
      .withResponse();
    expect(fallback.response.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
    expect(Number(fallback.response.headers.get("x-gateway-cost"))).toBeGreaterThan(0);

    const allow = await admin("PUT", `/v2/policies/usage-limits/${policy.id}`, { unpriced: "allow" });
    expect(allow.body.unpriced).toBe("allow");
    const admitted = await openai.chat.completions.create({ model: "in-house-model-7", messages }).withResponse();
    expect(admitted.response.headers.get("x-gateway-cost-priced")).toBe("false");

    // An admin finds the unpriced traffic.
    await expect.poll(async () => (await logsOf(key.key, "priced=false")).length).toBeGreaterThan(0);
    const unpriced = await logsOf(key.key, "priced=false");
    expect(unpriced.every((log) => log.priced === false && log.cost === undefined)).toBe(true);
    expect(unpriced[0].costDetails.reason).toContain("in-house-model-7");

    // `estimate` needs its rate, and counts the tokens at it.
    const invalid = await admin("PUT", `/v2/policies/usage-limits/${policy.id}`, { unpriced: "estimate" });
    expect(invalid.status).toBe(400);
    await admin("PUT", `/v2/policies/usage-limits/${policy.id}`, {
      unpriced: "estimate",
      unpriced_rate: { input: 1_000_000, output: 1_000_000 },
    });
    const estimated = await openai.chat.completions.create({ model: "in-house-model-7", messages });
    const expectedUsd = estimated.usage!.total_tokens;
    await expect
      .poll(async () => (await admin("GET", `/v2/policies/usage-limits/${policy.id}/usage`)).body.data?.[0]?.usage)
      .toBeGreaterThanOrEqual(expectedUsd);
  });
});

describe("custom logs", () => {
  it("are priced from the provider their URL names and the usage their answer reports", async () => {
    const key = await workspaceKey();
    const created = await call(gateway, key.key, "POST", "/v1/logs", {
      request: {
        url: "https://api.anthropic.com/v1/messages",
        body: { model: "claude-haiku-4-5", messages: [{ role: "user", content: "Hi" }], max_tokens: 50 },
      },
      response: {
        status: 200,
        body: {
          type: "message",
          model: "claude-haiku-4-5",
          usage: { input_tokens: 900, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 40 },
        },
      },
    });
    expect(created.status).toBe(201);
    const log = (await call(gateway, key.key, "GET", `/v1/logs/${created.body.id}`)).body;
    const expected = calcPrice({ input_tokens: 1000, cache_read_tokens: 100, output_tokens: 40 }, "claude-haiku-4-5", {
      providerId: "anthropic",
    })!.total_price;
    expect(log.provider).toBe("anthropic");
    expect(log.cost).toBeCloseTo(expected, 12);
    expect(log.costDetails.components.cache_read).toBeGreaterThan(0);

    const unknown = await call(gateway, key.key, "POST", "/v1/logs", {
      request: { url: "https://llm.internal.example/v1/generate", body: { model: "x" } },
      response: { body: { usage: { prompt_tokens: 5, completion_tokens: 5 } } },
    });
    const unpriced = (await call(gateway, key.key, "GET", `/v1/logs/${unknown.body.id}`)).body;
    expect(unpriced.priced).toBe(false);
    expect(unpriced.costDetails.reason).toMatch(/provider/i);
  });
});
