import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/** Every authenticated request leaves exactly one log, with masked headers, usage and cost; logging never fails a request. */

let gateway: TestGateway;
let upstream: OpenAIMock;
let client: OpenAI;
const PROVIDER_KEY = "sk-very-secret-provider-key";

beforeAll(async () => {
  upstream = await startOpenAIMock({ chunkDelayMs: 1 });
  gateway = await startTestGateway();
  client = new OpenAI({
    apiKey: PROVIDER_KEY,
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/v1`,
      "x-gateway-metadata": JSON.stringify({ _user: "alice", team: "search" }),
      "x-gateway-sensitive-headers": "x-customer-id",
      "x-customer-id": "customer-42",
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

async function listLogs(query = ""): Promise<any> {
  const response = await fetch(`${gateway.url}/v1/logs${query}`, {
    headers: { "x-gateway-api-key": gateway.adminKey },
  });
  expect(response.status).toBe(200);
  return response.json();
}

describe("request logs", () => {
  it("writes one log per request with usage, cost, metadata and masked headers", async () => {
    const before = (await listLogs("?limit=100")).data.length;
    await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] });
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
    });
    for await (const _ of stream) {
      // drain
    }
    await client.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], temperature: 9 })
      .catch(() => {});

    // Each request above, plus each GET /v1/logs, is logged once.
    await expect
      .poll(async () => (await listLogs("?limit=100&provider=openai")).data.length, { timeout: 5000 })
      .toBe(2);
    const { data } = await listLogs("?limit=100");
    expect(data.length).toBeGreaterThanOrEqual(before + 3);

    const [streamed, plain] = (await listLogs("?provider=openai")).data;
    expect(streamed).toMatchObject({
      stream: true,
      status: 200,
      requestedModel: "gpt-4o-mini",
      metadata: { _user: "alice", team: "search" },
    });
    expect(plain.usage.totalTokens).toBeGreaterThan(0);
    expect(plain.cost).toBeGreaterThan(0);
    expect(plain.headers.authorization).toBe("[masked]");
    expect(plain.headers["x-gateway-api-key"]).toBe("[masked]");
    expect(plain.headers["x-customer-id"]).toMatch(/^sha256:/);

    const detail = await (
      await fetch(`${gateway.url}/v1/logs/${plain.id}`, { headers: { "x-gateway-api-key": gateway.adminKey } })
    ).json();
    expect(detail.requestBody.messages[0].content).toBe("Hi");
    expect(detail.responseBody.object).toBe("chat.completion");

    const invalid = (await listLogs("?status=400")).data;
    expect(invalid[0]).toMatchObject({ route: "/v1/chat/completions", status: 400 });
  });

  it("never stores the provider key or the gateway key", async () => {
    const dir = gateway.gateway.services.settings.GATEWAY_DATA_DIR;
    const files = readdirSync(dir).filter((file) => file.startsWith("gateway.db"));
    for (const file of files) {
      const bytes = readFileSync(join(dir, file));
      expect(bytes.includes(PROVIDER_KEY)).toBe(false);
      expect(bytes.includes(gateway.adminKey)).toBe(false);
    }
  });

  it("filters by metadata and paginates with a cursor", async () => {
    const first = await listLogs("?limit=1&metadata_key=team&metadata_value=search");
    expect(first.data).toHaveLength(1);
    expect(first.has_more).toBe(true);
    const second = await listLogs(`?limit=1&metadata_key=team&metadata_value=search&cursor=${first.next_cursor}`);
    expect(second.data[0].id).not.toBe(first.data[0].id);
    expect(
      (await fetch(`${gateway.url}/v1/logs?cursor=@@`, { headers: { "x-gateway-api-key": gateway.adminKey } })).status,
    ).toBe(400);
  });

  it("lists a trace's spans as a tree", async () => {
    const trace = `trace-${Date.now()}`;
    const call = (span: string, parent?: string) =>
      client.chat.completions.create(
        { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] },
        {
          headers: {
            "x-gateway-trace-id": trace,
            "x-gateway-span-id": span,
            ...(parent ? { "x-gateway-parent-span-id": parent } : {}),
          },
        },
      );
    await call("root");
    await call("child-1", "root");
    await call("grandchild", "child-1");
    await call("child-2", "root");
    const get = () =>
      fetch(`${gateway.url}/v1/logs/traces/${trace}`, { headers: { "x-gateway-api-key": gateway.adminKey } });
    await expect.poll(async () => (await (await get()).json()).spans?.[0]?.children?.length, { timeout: 5000 }).toBe(2);
    const body = await (await get()).json();
    expect(body.spans).toHaveLength(1);
    expect(body.spans[0].span_id).toBe("root");
    const [first, second] = body.spans[0].children;
    expect([first.span_id, second.span_id].sort()).toEqual(["child-1", "child-2"]);
    const child1 = first.span_id === "child-1" ? first : second;
    expect(child1.children[0]).toMatchObject({ span_id: "grandchild", parent_span_id: "child-1" });
    expect(body.spans[0].log.requestBody).toBeUndefined();
    const missing = await fetch(`${gateway.url}/v1/logs/traces/no-such-trace`, {
      headers: { "x-gateway-api-key": gateway.adminKey },
    });
    expect(missing.status).toBe(404);
  });

  it("keeps logs for the workspace's retention period", async () => {
    const { createApiKey } = await import("../../core/auth/api-key-records.ts");
    const { workspaceStore } = await import("../../core/control/workspaces/store.ts");
    const services = gateway.gateway.services;
    const { organisationId, defaultWorkspaceId } = gateway.gateway.bootstrap;
    const update = await fetch(`${gateway.url}/v1/admin/workspaces/${defaultWorkspaceId}`, {
      method: "PUT",
      headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json" },
      body: JSON.stringify({ log_retention_days: 2 }),
    });
    expect(update.status).toBe(200);
    expect((await update.json()).log_retention_days).toBe(2);
    expect(
      (await workspaceStore(services.stores.records).get(organisationId, defaultWorkspaceId))?.log_retention_days,
    ).toBe(2);
    const { secret } = await createApiKey(services.stores.records, {
      organisationId,
      workspaceId: defaultWorkspaceId,
      name: "retention",
      keyType: "workspace",
      keySubType: "service",
      scopes: ["*"],
    });
    const trace = `retention-${Date.now()}`;
    await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "x-gateway-api-key": secret,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${upstream.url}/v1`,
        "x-gateway-trace-id": trace,
        authorization: "Bearer sk-x",
        "content-type": "application/json",
      },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }),
    });
    await expect.poll(async () => (await listLogs(`?trace_id=${trace}`)).data.length, { timeout: 5000 }).toBe(1);
    const [log] = (await listLogs(`?trace_id=${trace}`)).data;
    const item = await services.stores.logSink.records.get(`LOG#${log.id}`, "LOG");
    const expected = Math.floor(Date.parse(log.createdAt) / 1000) + 2 * 86_400;
    expect(item?.ttl).toBe(expected);
    const invalid = await fetch(`${gateway.url}/v1/admin/workspaces/${defaultWorkspaceId}`, {
      method: "PUT",
      headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json" },
      body: JSON.stringify({ log_retention_days: 0 }),
    });
    expect(invalid.status).toBe(400);
  });

  it("accepts custom logs", async () => {
    const response = await fetch(`${gateway.url}/v1/logs`, {
      method: "POST",
      headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json" },
      body: JSON.stringify({
        request: { url: "https://api.example.com/v1/chat/completions", provider: "example", body: { model: "m1" } },
        response: {
          status: 200,
          body: { model: "m1", usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
          response_time: 120,
        },
        metadata: { origin: "batch-job" },
      }),
    });
    expect(response.status).toBe(201);
    const { id } = await response.json();
    const log = await (
      await fetch(`${gateway.url}/v1/logs/${id}`, { headers: { "x-gateway-api-key": gateway.adminKey } })
    ).json();
    expect(log).toMatchObject({ source: "custom", provider: "example", usage: { totalTokens: 7 }, latencyMs: 120 });
  });

  it("a failing log store never fails a request, and the breaker opens", async () => {
    const { logSink } = gateway.gateway.services.stores;
    const realWrite = logSink.write.bind(logSink);
    logSink.write = () => Promise.reject(new Error("log store down"));
    try {
      // Logs of earlier requests may still be committing (a success resets the count of consecutive failures):
      // keep asking until five failures in a row open the breaker.
      for (let i = 0; i < 30 && !gateway.gateway.services.logger.breaker.open; i++) {
        const answer = await client.chat.completions.create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "Hi" }],
        });
        expect(answer.choices[0]!.message.content).toBeTruthy();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await expect.poll(() => gateway.gateway.services.logger.breaker.open, { timeout: 5000 }).toBe(true);
    } finally {
      logSink.write = realWrite;
    }
  });
});
