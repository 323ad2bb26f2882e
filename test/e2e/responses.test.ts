import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import type { MockServer } from "../helpers/mock-server.ts";
import { startAnthropicMock } from "../mocks/anthropic.ts";
import { startBedrockMock } from "../mocks/bedrock.ts";
import { startGoogleMock } from "../mocks/google.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * The Responses API on every provider, driven by the official `openai` client's `responses` methods: natively on
 * OpenAI (the request forwarded as it is, the answer parsed for usage), through the chat adapters on Anthropic,
 * Bedrock and Gemini (mock upstreams speaking each provider's wire format). Stored responses, input items,
 * previous_response_id chains, function calling round trips, deletion, background runs, isolation and logs.
 */

let gateway: TestGateway;
const mocks: MockServer[] = [];
let openaiMock: OpenAIMock;

beforeAll(async () => {
  gateway = await startTestGateway();
  openaiMock = await startOpenAIMock({ reply: "Native hello.", toolArguments: { city: "Paris" } });
  mocks.push(openaiMock);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all(mocks.map((mock) => mock.close()));
});

function clientFor(headers: Record<string, string>, key = gateway.adminKey): OpenAI {
  return new OpenAI({
    apiKey: "provider-key",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: { "x-gateway-api-key": key, ...headers },
    maxRetries: 0,
  });
}

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

async function logsOf(path: string): Promise<any[]> {
  const response = await fetch(`${gateway.url}/v1/logs?limit=100`, {
    headers: { "x-gateway-api-key": gateway.adminKey },
  });
  const { data } = (await response.json()) as { data: any[] };
  return data.filter((log) => log.path === path);
}

/** Every provider family the Responses API must work on, and how the client reaches it. */
async function providers(): Promise<Array<{ name: string; model: string; client: OpenAI; native: boolean }>> {
  const anthropic = await startAnthropicMock({ delayMs: 2 });
  const google = await startGoogleMock({ apiKey: "provider-key", streamDelayMs: 2 });
  const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
  const bedrock = await startBedrockMock({ credentials });
  mocks.push(anthropic, google, bedrock);
  return [
    {
      name: "openai (native)",
      model: "gpt-4o-mini",
      native: true,
      client: clientFor({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${openaiMock.url}/v1` }),
    },
    {
      name: "anthropic",
      model: "claude-3-5-sonnet-20241022",
      native: false,
      client: clientFor({ "x-gateway-provider": "anthropic", "x-gateway-custom-host": anthropic.url }),
    },
    {
      name: "google gemini",
      model: "gemini-2.0-flash",
      native: false,
      client: clientFor({ "x-gateway-provider": "google", "x-gateway-custom-host": google.url }),
    },
    {
      name: "aws bedrock",
      model: "anthropic.claude-3-5-sonnet-20240620-v1:0",
      native: false,
      client: clientFor({
        "x-gateway-provider": "bedrock",
        "x-gateway-custom-host": bedrock.url,
        "x-gateway-aws-access-key-id": credentials.accessKeyId,
        "x-gateway-aws-secret-access-key": credentials.secretAccessKey,
        "x-gateway-aws-region": "us-east-1",
      }),
    },
  ];
}

describe("responses on every provider", () => {
  let targets: Awaited<ReturnType<typeof providers>>;
  beforeAll(async () => {
    targets = await providers();
  });

  it("create, stream, retrieve, input items, previous_response_id, function calls and delete", async () => {
    for (const { name, model, client } of targets) {
      const first = await client.responses.create({ model, instructions: "Be brief.", input: "Hi there" });
      expect(first.object, name).toBe("response");
      expect(first.status, name).toBe("completed");
      expect(first.output_text.length, name).toBeGreaterThan(0);
      expect(first.usage?.input_tokens, name).toBeGreaterThan(0);
      expect(first.usage?.total_tokens, name).toBe(
        (first.usage?.input_tokens ?? 0) + (first.usage?.output_tokens ?? 0),
      );

      // Stored: retrieved, and its input items listed.
      await expect
        .poll(async () => (await client.responses.retrieve(first.id).catch(() => undefined))?.id)
        .toBe(first.id);
      const items = await client.responses.inputItems.list(first.id);
      expect(
        items.data.map((item: any) => item.type),
        name,
      ).toEqual(["message"]);

      // A streamed follow-up in the same conversation.
      const stream = await client.responses.create({
        model,
        input: "And again",
        previous_response_id: first.id,
        stream: true,
      });
      const types: string[] = [];
      let text = "";
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "response.output_text.delta") text += event.delta;
        if (event.type === "response.completed") completed = event.response;
      }
      expect(types[0], name).toBe("response.created");
      expect(types.at(-1), name).toBe("response.completed");
      expect(text.length, name).toBeGreaterThan(0);
      expect(completed?.usage?.output_tokens, name).toBeGreaterThan(0);

      // Function calling round trip: the call, then its output sent back in the chain.
      const call = await client.responses.create({ model, input: "Weather in Paris?", tools: [weatherTool] });
      const fc = call.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
      expect(fc?.name, name).toBe("get_weather");
      await expect
        .poll(async () => (await client.responses.retrieve(call.id).catch(() => undefined))?.id)
        .toBe(call.id);
      const after = await client.responses.create({
        model,
        previous_response_id: call.id,
        input: [{ type: "function_call_output", call_id: fc.call_id, output: '{"temperature": 21}' }],
        tools: [weatherTool],
        tool_choice: "none",
      });
      expect(after.status, name).toBe("completed");
      expect(after.previous_response_id, name).toBe(call.id);

      await client.responses.delete(first.id);
      await expect(client.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    }
  });

  it("the native provider gets the whole conversation instead of an id it never issued", async () => {
    const { client, model } = targets.find((target) => target.native)!;
    const first = await client.responses.create({ model, input: "Remember: blue." });
    await expect
      .poll(async () => (await client.responses.retrieve(first.id).catch(() => undefined))?.id)
      .toBe(first.id);
    await client.responses.create({ model, input: "Which colour?", previous_response_id: first.id });
    const sent = JSON.parse(openaiMock.lastRequest()!.body.toString());
    expect(sent.previous_response_id).toBeUndefined();
    expect(JSON.stringify(sent.input)).toContain("Remember: blue.");
    expect(JSON.stringify(sent.input)).toContain("Native hello.");
    expect(JSON.stringify(sent.input)).toContain("Which colour?");
  });

  it("input items page with limit, order and cursors", async () => {
    const { client, model } = targets.find((target) => target.name === "anthropic")!;
    const input = Array.from({ length: 5 }, (_, index) => ({ role: "user" as const, content: `message ${index}` }));
    const response = await client.responses.create({ model, input });
    await expect
      .poll(async () => (await client.responses.retrieve(response.id).catch(() => undefined))?.id)
      .toBe(response.id);
    const page = await client.responses.inputItems.list(response.id, { limit: 2 });
    expect(page.data).toHaveLength(2);
    expect(page.has_more).toBe(true);
    const all: string[] = [];
    for await (const item of client.responses.inputItems.list(response.id, { limit: 2 })) all.push((item as any).id);
    expect(all).toHaveLength(5);
    const desc = await client.responses.inputItems.list(response.id, { order: "desc", limit: 100 });
    expect(desc.data.map((item: any) => item.id)).toEqual([...all].reverse());
    const bad = await fetch(`${gateway.url}/v1/responses/${response.id}/input_items?limit=101`, {
      headers: { "x-gateway-api-key": gateway.adminKey },
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.param).toBe("limit");
  });

  it("bad bodies answer 400 naming the param; truncation disabled over the context window answers 400", async () => {
    const { client, model } = targets.find((target) => target.name === "anthropic")!;
    await expect(client.responses.create({ model, input: "x", temperature: 5 })).rejects.toMatchObject({
      status: 400,
      param: "temperature",
    });
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, "v"]));
    await expect(client.responses.create({ model, input: "x", metadata })).rejects.toMatchObject({ status: 400 });
    const huge = "word ".repeat(260_000);
    await expect(client.responses.create({ model, input: huge })).rejects.toMatchObject({ status: 400 });
  });

  it("background responses run on and are polled to completion", async () => {
    const { client, model } = targets.find((target) => target.name === "google gemini")!;
    const queued = await client.responses.create({ model, input: "Hi", background: true });
    expect(["queued", "in_progress"]).toContain(queued.status);
    await expect
      .poll(async () => (await client.responses.retrieve(queued.id)).status, { timeout: 5000 })
      .toBe("completed");
    const done = await client.responses.retrieve(queued.id);
    expect(done.output_text.length).toBeGreaterThan(0);
    await expect(client.responses.cancel(queued.id)).rejects.toMatchObject({ status: 400 });
  });

  it("guardrails and rate limits apply: 446 on a denied input, 429 past a key's limit", async () => {
    const config = {
      provider: "openai",
      custom_host: `${openaiMock.url}/v1`,
      input_guardrails: [{ "default.regexMatch": { rule: "(?i)password", not: true }, deny: true }],
    };
    const guarded = clientFor({ "x-gateway-config": JSON.stringify(config) });
    await expect(
      guarded.responses.create({ model: "gpt-4o-mini", input: "my password is hunter2" }),
    ).rejects.toMatchObject({
      status: 446,
    });
    // Translated (Anthropic) and streamed: the same denial before any provider is called.
    const anthropic = targets.find((target) => target.name === "anthropic")!;
    const host = (anthropic.client as any)._options.defaultHeaders["x-gateway-custom-host"];
    const translated = clientFor({
      "x-gateway-config": JSON.stringify({ ...config, provider: "anthropic", custom_host: host }),
    });
    await expect(
      translated.responses.create({ model: anthropic.model, input: "the password", stream: true }),
    ).rejects.toMatchObject({ status: 446 });
    expect((await guarded.responses.create({ model: "gpt-4o-mini", input: "hello" })).status).toBe("completed");

    const workspace = await seedWorkspace(gateway, "resp-limits");
    const limited = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "limited",
      workspace_id: workspace.id,
      scopes: ["*"],
      rate_limits: { unit: "rpd", value: 1 },
    });
    const client = clientFor(
      { "x-gateway-provider": "openai", "x-gateway-custom-host": `${openaiMock.url}/v1` },
      limited.key,
    );
    await client.responses.create({ model: "gpt-4o-mini", input: "one" });
    await expect(client.responses.create({ model: "gpt-4o-mini", input: "two" })).rejects.toMatchObject({
      status: 429,
    });
  });

  it("usage and cost are logged for responses, streamed or not", async () => {
    await expect.poll(async () => (await logsOf("/v1/responses")).length, { timeout: 5000 }).toBeGreaterThan(8);
    const logs = await logsOf("/v1/responses");
    const ok = logs.filter((log) => log.status === 200 && log.usage);
    expect(ok.some((log) => log.stream === true && log.usage.totalTokens > 0)).toBe(true);
    expect(ok.some((log) => log.provider === "openai" && log.usage.totalTokens > 0 && log.cost > 0)).toBe(true);
    expect(ok.some((log) => log.provider === "anthropic" && log.usage.totalTokens > 0 && log.cost > 0)).toBe(true);
  });

  it("another workspace cannot read, list, delete or continue a stored response", async () => {
    const target = targets.find((entry) => entry.name === "anthropic")!;
    const host = (target.client as any)._options.defaultHeaders["x-gateway-custom-host"];
    const [wsA, wsB] = [await seedWorkspace(gateway, "resp-a"), await seedWorkspace(gateway, "resp-b")];
    const keyA = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "a",
      workspace_id: wsA.id,
      scopes: ["*"],
    });
    const keyB = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "b",
      workspace_id: wsB.id,
      scopes: ["*"],
    });
    const headers = { "x-gateway-provider": "anthropic", "x-gateway-custom-host": host };
    const a = clientFor(headers, keyA.key);
    const b = clientFor(headers, keyB.key);
    const mine = await a.responses.create({ model: target.model, input: "secret" });
    await expect.poll(async () => (await a.responses.retrieve(mine.id).catch(() => undefined))?.id).toBe(mine.id);
    await expect(b.responses.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.responses.inputItems.list(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.responses.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.responses.cancel(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      b.responses.create({ model: target.model, input: "continue", previous_response_id: mine.id }),
    ).rejects.toMatchObject({ status: 404, param: "previous_response_id" });
    expect((await a.responses.retrieve(mine.id)).id).toBe(mine.id);
  });

  it("two workspaces whose provider answered with the same response id each store and read their own", async () => {
    // A custom host whose ids are not unique (a fixed one here): the second workspace's answer was not stored.
    const sameIds = await startOpenAIMock({ reply: "Same id.", responseId: "resp_not_unique" });
    mocks.push(sameIds);
    const headers = { "x-gateway-provider": "openai", "x-gateway-custom-host": `${sameIds.url}/v1` };
    const [wsA, wsB] = [await seedWorkspace(gateway, "same-id-a"), await seedWorkspace(gateway, "same-id-b")];
    const clients = await Promise.all(
      [wsA, wsB].map(async (workspace) => {
        const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
          name: workspace.name,
          workspace_id: workspace.id,
          scopes: ["*"],
        });
        return clientFor(headers, key.key);
      }),
    );
    for (const [index, client] of clients.entries()) {
      const created = await client.responses.create({ model: "gpt-4o-mini", input: `workspace ${index}` });
      expect(created.id).toBe("resp_not_unique");
    }
    for (const [index, client] of clients.entries()) {
      await expect
        .poll(async () => (await client.responses.retrieve("resp_not_unique").catch(() => undefined))?.id)
        .toBe("resp_not_unique");
      const items = await client.responses.inputItems.list("resp_not_unique");
      expect(JSON.stringify(items.data)).toContain(`workspace ${index}`);
    }
    // Each deletes its own only.
    await clients[0]!.responses.delete("resp_not_unique");
    await expect(clients[0]!.responses.retrieve("resp_not_unique")).rejects.toMatchObject({ status: 404 });
    expect((await clients[1]!.responses.retrieve("resp_not_unique")).id).toBe("resp_not_unique");
  });
});
