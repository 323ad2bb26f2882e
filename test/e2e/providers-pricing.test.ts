import OpenAI from "openai";
import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Model pricing overrides and custom models (/v1/model-pricing) and the logged cost they produce from the next
 * request on; the portkey-ai SDK's analytics names. The mock upstream follows OpenAI's chat completions API
 * (https://platform.openai.com/docs/api-reference/chat/create) and reports usage; cost is checked against the
 * usage the log records.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let wsA: { id: string };
let wsB: { id: string };
let keyA: string;
let keyB: string;
let run = 0;

beforeAll(async () => {
  upstream = await startOpenAIMock();
  gateway = await startTestGateway();
  wsA = await seedWorkspace(gateway, "Pricing A");
  wsB = await seedWorkspace(gateway, "Pricing B");
  const scopes = ["model_pricing.create", "model_pricing.read", "model_pricing.list", "model_pricing.update"];
  const all = [...scopes, "model_pricing.delete", "logs.list", "completions.write"];
  keyA = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", { name: "a", workspace_id: wsA.id, scopes: all })
  ).key;
  keyB = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", { name: "b", workspace_id: wsB.id, scopes: all })
  ).key;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** One chat request through the gateway with `key`; answers its log record (usage and cost). */
async function chatAndLog(key: string, model: string): Promise<{ cost: number; usage: any }> {
  const tag = `run-${++run}`;
  const client = new OpenAI({
    apiKey: "sk-provider",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      "x-gateway-api-key": key,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/v1`,
      "x-gateway-metadata": JSON.stringify({ run: tag }),
    },
  });
  await client.chat.completions.create({ model, messages: [{ role: "user", content: "Price this please" }] });
  let log: any;
  await expect
    .poll(
      async () => {
        const answer = await call(gateway, gateway.adminKey, "GET", `/v1/logs?metadata_key=run&metadata_value=${tag}`);
        log = answer.body.data?.[0];
        return log !== undefined;
      },
      { timeout: 5000 },
    )
    .toBe(true);
  return { cost: log.cost, usage: log.usage };
}

const expected = (usage: any, input: number, output: number) =>
  (usage.promptTokens * input + usage.completionTokens * output) / 1_000_000;

describe("model pricing", () => {
  it("an organisation override changes the logged cost of the next request, listed beside the catalog price", async () => {
    const before = await chatAndLog(gateway.adminKey, "gpt-4o-mini");
    expect(before.usage.promptTokens).toBeGreaterThan(0);
    expect(before.cost).toBeGreaterThan(0);
    expect(before.cost).toBeCloseTo(expected(before.usage, 0.15, 0.6), 10);

    const created = await call(gateway, gateway.adminKey, "POST", "/v1/model-pricing", {
      provider: "openai",
      model: "gpt-4o-mini",
      prices: { input: 1000, output: 2000 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: "model_pricing",
      level: "organisation",
      workspace_id: null,
      prices: { input: 1000, output: 2000 },
      catalog_prices: { input: 0.15, output: 0.6 },
      is_custom: false,
    });

    const after = await chatAndLog(gateway.adminKey, "gpt-4o-mini");
    expect(after.cost).toBeCloseTo(expected(after.usage, 1000, 2000), 10);

    const list = await call(gateway, gateway.adminKey, "GET", "/v1/model-pricing?model=gpt-4o-mini");
    expect(list.body.data.map((row: any) => row.id)).toContain(created.body.id);
    const audit = await call(gateway, gateway.adminKey, "GET", "/v1/audit-logs?limit=50");
    expect(JSON.stringify(audit.body)).toContain(created.body.id);
  });

  it("prices a custom model only by its override", async () => {
    const unpriced = await chatAndLog(gateway.adminKey, "house-model-7b");
    expect(unpriced.cost ?? 0).toBe(0);
    const created = await call(gateway, gateway.adminKey, "POST", "/v1/model-pricing", {
      provider: "openai",
      model: "house-model-7b",
      prices: { input: 3, output: 4 },
    });
    expect(created.body).toMatchObject({ is_custom: true, catalog_prices: null });
    const priced = await chatAndLog(gateway.adminKey, "house-model-7b");
    expect(priced.cost).toBeGreaterThan(0);
    expect(priced.cost).toBeCloseTo(expected(priced.usage, 3, 4), 10);
  });

  it("a workspace override beats the organisation's, and stays its workspace's", async () => {
    const created = await call(gateway, keyA, "POST", "/v1/model-pricing", {
      provider: "openai",
      model: "gpt-4o-mini",
      prices: { input: 5000 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ level: "workspace", workspace_id: wsA.id });

    // Field by field: the workspace's input price, the organisation's output price.
    const inA = await chatAndLog(keyA, "gpt-4o-mini");
    expect(inA.cost).toBeCloseTo(expected(inA.usage, 5000, 2000), 10);
    const inB = await chatAndLog(keyB, "gpt-4o-mini");
    expect(inB.cost).toBeCloseTo(expected(inB.usage, 1000, 2000), 10);

    // Another workspace can neither read, list, change nor delete it.
    expect((await call(gateway, keyB, "GET", `/v1/model-pricing/${created.body.id}`)).status).toBe(404);
    expect(
      (await call(gateway, keyB, "PUT", `/v1/model-pricing/${created.body.id}`, { prices: { input: 0 } })).status,
    ).toBe(404);
    expect((await call(gateway, keyB, "DELETE", `/v1/model-pricing/${created.body.id}`)).status).toBe(404);
    const listB = await call(gateway, keyB, "GET", "/v1/model-pricing");
    expect(listB.body.data.map((row: any) => row.id)).not.toContain(created.body.id);
    // ... nor price the other workspace's, nor the organisation's.
    expect(
      (
        await call(gateway, keyB, "POST", "/v1/model-pricing", {
          provider: "openai",
          model: "x",
          workspace_id: wsA.id,
          prices: { input: 1 },
        })
      ).status,
    ).toBe(403);
    const orgPrice = listB.body.data.find((row: any) => row.level === "organisation");
    expect(
      (await call(gateway, keyB, "PUT", `/v1/model-pricing/${orgPrice.id}`, { prices: { input: 0 } })).status,
    ).toBe(403);

    // An update is used from the next request on; a delete falls back to the organisation's price.
    const updated = await call(gateway, keyA, "PUT", `/v1/model-pricing/${created.body.id}`, {
      prices: { input: 7000, output: 1 },
    });
    expect(updated.status).toBe(200);
    const afterUpdate = await chatAndLog(keyA, "gpt-4o-mini");
    expect(afterUpdate.cost).toBeCloseTo(expected(afterUpdate.usage, 7000, 1), 10);
    expect((await call(gateway, keyA, "DELETE", `/v1/model-pricing/${created.body.id}`)).status).toBe(200);
    const afterDelete = await chatAndLog(keyA, "gpt-4o-mini");
    expect(afterDelete.cost).toBeCloseTo(expected(afterDelete.usage, 1000, 2000), 10);
  });

  it("answers 400 naming the parameter for a bad body, 409 for a second price of the same model", async () => {
    const negative = await call(gateway, gateway.adminKey, "POST", "/v1/model-pricing", {
      provider: "openai",
      model: "gpt-4o",
      prices: { input: -1 },
    });
    expect(negative.status).toBe(400);
    expect(negative.body.error.param).toBe("prices.input");
    const unknown = await call(gateway, gateway.adminKey, "POST", "/v1/model-pricing", {
      provider: "nope",
      model: "gpt-4o",
      prices: { input: 1 },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.param).toBe("provider");
    const again = await call(gateway, gateway.adminKey, "POST", "/v1/model-pricing", {
      provider: "openai",
      model: "gpt-4o-mini",
      prices: { input: 1 },
    });
    expect(again.status).toBe(409);
  });
});

describe("analytics names of the portkey-ai SDK", () => {
  it("answers 200 for every graph, group and summary the SDK calls", async () => {
    const portkey = new Portkey({ apiKey: gateway.adminKey, baseURL: `${gateway.url}/v1` });
    const query = {
      time_of_generation_min: "2020-01-01T00:00:00Z",
      time_of_generation_max: "2020-12-31T00:00:00Z",
    } as any;
    const graphs = portkey.analytics.graphs as any;
    const names = [
      "requests",
      "cost",
      "latency",
      "tokens",
      "users",
      "usersRequests",
      "errors",
      "errors_rate",
      "errors_stack",
      "errors_status_code",
      "requests_rescued",
      "cache_hit_rate",
      "cache_latency",
      "feedbacks",
      "feedbacks_score",
      "feedbacks_weighted",
      "feedback_ai_models",
    ];
    for (const name of names) {
      expect(typeof graphs[name], name).toBe("function");
      const answer = await graphs[name](query);
      expect(answer.object, name).toBe("analytics-graph");
      expect(Array.isArray(answer.data_points), name).toBe(true);
    }
    const groups = portkey.analytics.groups as any;
    for (const name of ["users", "aiModels", "workspaces"]) {
      expect(typeof groups[name], name).toBe("function");
      expect((await groups[name](query)).object, name).toBe("list");
    }
    expect((await groups.metadata("team", query)).metadata_key).toBe("team");
    expect((await groups.groupedData("providers", query)).object).toBe("list");
    expect((await (portkey.analytics.summary as any).cache(query)).object).toBe("analytics-summary");
  });
});
