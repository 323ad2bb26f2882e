import { randomUUID } from "node:crypto";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type AssistantsMock, RUN_USAGE, startAssistantsMock } from "../mocks/openai-assistants.ts";

/**
 * OpenAI's Assistants API v2 through the gateway with the `openai` SDK (beta.assistants, beta.threads with messages
 * and runs, vectorStores) against a stateful mock of the API over real HTTP: forwarding with OpenAI-Beta, run usage
 * and cost in the log of the call that saw the run finish (once per run), workspace isolation on one shared
 * provider key, Azure OpenAI's path shape, and 400s naming the param.
 */

const PROVIDER_KEY = "sk-assistants-provider-secret";
let gateway: TestGateway;
let openai: AssistantsMock;
let azure: AssistantsMock;
let keyA: string;
let keyB: string;

async function workspaceKey(name: string): Promise<string> {
  const workspace = await seedWorkspace(gateway, name);
  const created = await createKey(gateway, gateway.adminKey, "workspace", "service", {
    name,
    workspace_id: workspace.id,
    scopes: ["*"],
  });
  return created.key;
}

beforeAll(async () => {
  gateway = await startTestGateway();
  openai = await startAssistantsMock({ apiKey: PROVIDER_KEY });
  azure = await startAssistantsMock({ apiKey: PROVIDER_KEY, azure: true });
  keyA = await workspaceKey("assistants-a");
  keyB = await workspaceKey("assistants-b");
});

afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await azure?.close();
});

/** A client of one workspace on the same OpenAI account (the same provider key). */
function clientFor(key: string, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    apiKey: PROVIDER_KEY,
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: {
      "x-gateway-api-key": key,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${openai.url}/v1`,
      ...headers,
    },
    maxRetries: 0,
  });
}

const traced = () => {
  const trace = randomUUID();
  return { trace, options: { headers: { "x-gateway-trace-id": trace } } };
};

/** The one log record of a traced call, once written. */
async function logOf(trace: string, key: string): Promise<any> {
  let found: any;
  await expect
    .poll(
      async () => {
        const response = await fetch(`${gateway.url}/v1/logs?trace_id=${trace}`, {
          headers: { "x-gateway-api-key": key },
        });
        found = ((await response.json()) as { data: any[] }).data[0];
        return found !== undefined;
      },
      { timeout: 5000 },
    )
    .toBe(true);
  return found;
}

describe("the Assistants API through the gateway", () => {
  it("creates, lists, retrieves, updates and deletes assistants, forwarding OpenAI-Beta and the body unchanged", async () => {
    const client = clientFor(keyA);
    const { trace, options } = traced();
    const assistant = await client.beta.assistants.create(
      { model: "gpt-4o", name: "Helper", instructions: "Be brief.", metadata: { team: "a" } },
      options,
    );
    expect(assistant).toMatchObject({ object: "assistant", model: "gpt-4o", name: "Helper" });
    const sent = openai.requests.at(-1)!;
    expect(sent.path).toBe("/v1/assistants");
    expect(sent.headers["openai-beta"]).toBe("assistants=v2");
    expect(sent.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(sent.headers["x-gateway-api-key"]).toBeUndefined();
    expect(sent.json()).toEqual({
      model: "gpt-4o",
      name: "Helper",
      instructions: "Be brief.",
      metadata: { team: "a" },
    });

    const listed = await client.beta.assistants.list();
    expect(listed.data.map((item) => item.id)).toContain(assistant.id);
    expect((await client.beta.assistants.retrieve(assistant.id)).id).toBe(assistant.id);
    const updated = await client.beta.assistants.update(assistant.id, { name: "Renamed" });
    expect(updated.name).toBe("Renamed");
    const deleted = await client.beta.assistants.delete(assistant.id);
    expect(deleted).toEqual({ id: assistant.id, object: "assistant.deleted", deleted: true });

    const log = await logOf(trace, keyA);
    expect(log).toMatchObject({ method: "POST", path: "/v1/assistants", status: 200, provider: "openai" });
    expect(log.requestedModel).toBe("gpt-4o");
    // The provider key is never logged.
    expect(JSON.stringify(log)).not.toContain(PROVIDER_KEY);
  });

  it("runs a thread with createAndPoll: the completing poll's log has the run's usage and cost, counted once", async () => {
    const client = clientFor(keyA);
    const assistant = await client.beta.assistants.create({ model: "gpt-4o", instructions: "Answer." });
    const thread = await client.beta.threads.create();
    const message = await client.beta.threads.messages.create(thread.id, { role: "user", content: "Hello?" });
    expect(message).toMatchObject({ object: "thread.message", thread_id: thread.id, role: "user" });

    const { trace, options } = traced();
    const run = await client.beta.threads.runs.createAndPoll(
      thread.id,
      { assistant_id: assistant.id },
      { ...options, pollIntervalMs: 5 },
    );
    expect(run.status).toBe("completed");
    expect(run.usage).toEqual(RUN_USAGE);

    const messages = await client.beta.threads.messages.list(thread.id);
    expect(messages.data.map((item) => item.role).sort()).toEqual(["assistant", "user"]);

    // createAndPoll made three calls with one trace id: create (queued), poll (in_progress), poll (completed).
    let logs: any[] = [];
    await expect
      .poll(
        async () => {
          const response = await fetch(`${gateway.url}/v1/logs?trace_id=${trace}`, {
            headers: { "x-gateway-api-key": keyA },
          });
          logs = ((await response.json()) as { data: any[] }).data;
          return logs.length;
        },
        { timeout: 5000 },
      )
      .toBe(3);
    const counted = logs.filter((log) => log.usage);
    expect(counted).toHaveLength(1);
    expect(counted[0]).toMatchObject({
      method: "GET",
      path: `/v1/threads/${thread.id}/runs/${run.id}`,
      answeredModel: "gpt-4o",
      usage: { promptTokens: 1200, completionTokens: 300, totalTokens: 1500 },
    });
    expect(counted[0].cost).toBeGreaterThan(0);

    // Polling the finished run again logs no usage: the run was counted.
    const again = traced();
    expect((await client.beta.threads.runs.retrieve(run.id, { thread_id: thread.id }, again.options)).status).toBe(
      "completed",
    );
    const repeat = await logOf(again.trace, keyA);
    expect(repeat.usage).toBeUndefined();
    expect(repeat.cost).toBeUndefined();
  });

  it("relays a streamed run as it arrives and logs its usage from thread.run.completed", async () => {
    const client = clientFor(keyA);
    const assistant = await client.beta.assistants.create({ model: "gpt-4o" });
    const thread = await client.beta.threads.create({ messages: [{ role: "user", content: "Stream it." }] });
    const { trace, options } = traced();
    const stream = client.beta.threads.runs.stream(thread.id, { assistant_id: assistant.id }, options);
    const events: string[] = [];
    for await (const event of stream) events.push(event.event);
    expect(events).toEqual([
      "thread.run.created",
      "thread.run.queued",
      "thread.run.in_progress",
      "thread.message.created",
      "thread.message.delta",
      "thread.message.completed",
      "thread.run.completed",
    ]);
    const final = await stream.finalRun();
    expect(final.usage).toEqual(RUN_USAGE);

    const log = await logOf(trace, keyA);
    expect(log).toMatchObject({
      stream: true,
      path: `/v1/threads/${thread.id}/runs`,
      usage: { promptTokens: 1200, completionTokens: 300, totalTokens: 1500 },
    });
    expect(log.cost).toBeGreaterThan(0);
    // The run the stream created is the caller's: another workspace cannot read it.
    await expect(clientFor(keyB).beta.threads.runs.retrieve(final.id, { thread_id: thread.id })).rejects.toMatchObject({
      status: 404,
    });
  });

  it("submits tool outputs: the run finishes on the submit, whose log has the usage", async () => {
    const client = clientFor(keyA);
    const assistant = await client.beta.assistants.create({
      model: "gpt-4o",
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }],
    });
    const thread = await client.beta.threads.create({ messages: [{ role: "user", content: "Look it up." }] });
    const waiting = await client.beta.threads.runs.createAndPoll(
      thread.id,
      { assistant_id: assistant.id },
      { pollIntervalMs: 5 },
    );
    expect(waiting.status).toBe("requires_action");
    const call = waiting.required_action!.submit_tool_outputs.tool_calls[0]!;
    const { trace, options } = traced();
    const submitted = await client.beta.threads.runs.submitToolOutputs(
      waiting.id,
      { thread_id: thread.id, tool_outputs: [{ tool_call_id: call.id, output: "42" }], stream: true },
      options,
    );
    const names: string[] = [];
    for await (const event of submitted) names.push(event.event);
    expect(names.at(-1)).toBe("thread.run.completed");
    const log = await logOf(trace, keyA);
    expect(log).toMatchObject({
      path: `/v1/threads/${thread.id}/runs/${waiting.id}/submit_tool_outputs`,
      usage: { totalTokens: 1500 },
    });
    expect(log.cost).toBeGreaterThan(0);
  });

  it("creates a thread and run in one call, and vector stores with search", async () => {
    const client = clientFor(keyA);
    const store = await client.vectorStores.create({ name: "notes" });
    expect(store).toMatchObject({ object: "vector_store", name: "notes" });
    const page = await client.vectorStores.search(store.id, { query: "note" });
    expect(page.data[0]).toMatchObject({ file_id: "file-1" });
    const assistant = await client.beta.assistants.create({
      model: "gpt-4o",
      tools: [{ type: "file_search" }],
      tool_resources: { file_search: { vector_store_ids: [store.id] } },
    });
    const run = await client.beta.threads.createAndRun({
      assistant_id: assistant.id,
      thread: { messages: [{ role: "user", content: "Hi" }] },
    });
    expect(run.object).toBe("thread.run");
    // The thread the call created is recorded for the caller too.
    await expect(clientFor(keyB).beta.threads.retrieve(run.thread_id)).rejects.toMatchObject({ status: 404 });
    expect((await client.beta.threads.retrieve(run.thread_id)).id).toBe(run.thread_id);
  });
});

describe("workspace isolation on a shared provider account", () => {
  it("answers 404 on another workspace's assistant, thread and vector store, and keeps them out of its lists", async () => {
    const a = clientFor(keyA);
    const b = clientFor(keyB);
    const assistant = await a.beta.assistants.create({ model: "gpt-4o", name: "A's" });
    const thread = await a.beta.threads.create();
    const store = await a.vectorStores.create({ name: "A's store" });
    const mine = await b.beta.assistants.create({ model: "gpt-4o", name: "B's" });
    const myThread = await b.beta.threads.create();
    const before = openai.requests.length;

    const refused = [
      () => b.beta.assistants.retrieve(assistant.id),
      () => b.beta.assistants.update(assistant.id, { name: "taken" }),
      () => b.beta.assistants.delete(assistant.id),
      () => b.beta.threads.retrieve(thread.id),
      () => b.beta.threads.messages.create(thread.id, { role: "user", content: "hi" }),
      () => b.beta.threads.messages.list(thread.id),
      () => b.beta.threads.runs.create(thread.id, { assistant_id: mine.id }),
      // B's own thread, A's assistant in the body.
      () => b.beta.threads.runs.create(myThread.id, { assistant_id: assistant.id }),
      () => b.beta.threads.createAndRun({ assistant_id: assistant.id }),
      () => b.vectorStores.retrieve(store.id),
      () =>
        b.beta.assistants.create({
          model: "gpt-4o",
          tool_resources: { file_search: { vector_store_ids: [store.id] } },
        }),
    ];
    for (const attempt of refused) {
      const error = (await attempt().catch((thrown: unknown) => thrown)) as { status?: number; error?: any };
      expect(error.status).toBe(404);
      expect(error.error).toMatchObject({ type: "invalid_request_error" });
    }
    // None of them reached the provider.
    expect(openai.requests.length).toBe(before);

    const bAssistants = (await b.beta.assistants.list({ limit: 100 })).data.map((item) => item.id);
    expect(bAssistants).toContain(mine.id);
    expect(bAssistants).not.toContain(assistant.id);
    const aAssistants = (await a.beta.assistants.list({ limit: 100 })).data.map((item) => item.id);
    expect(aAssistants).toContain(assistant.id);
    expect(aAssistants).not.toContain(mine.id);
    const bStores = (await b.vectorStores.list({ limit: 100 })).data.map((item) => item.id);
    expect(bStores).not.toContain(store.id);

    // A deletes its assistant: the record goes with it.
    await a.beta.assistants.delete(assistant.id);
    await expect(a.beta.assistants.retrieve(assistant.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe("Azure OpenAI", () => {
  it("calls {resource}/openai/{path}?api-version=... with api-key", async () => {
    const client = new OpenAI({
      apiKey: PROVIDER_KEY,
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: {
        "x-gateway-api-key": keyA,
        "x-gateway-provider": "azure-openai",
        "x-gateway-custom-host": azure.url,
      },
      maxRetries: 0,
    });
    const assistant = await client.beta.assistants.create({ model: "my-gpt-4o-deployment" });
    expect(assistant.object).toBe("assistant");
    const created = azure.requests.at(-1)!;
    expect(created.path).toBe("/openai/assistants?api-version=2024-05-01-preview");
    expect(created.headers["api-key"]).toBe(PROVIDER_KEY);
    expect(created.headers.authorization).toBeUndefined();
    const listed = await client.beta.assistants.list({ limit: 5 });
    expect(listed.data.map((item) => item.id)).toContain(assistant.id);
    expect(azure.requests.at(-1)!.path).toBe("/openai/assistants?limit=5&api-version=2024-05-01-preview");
  });
});

describe("requests the gateway refuses", () => {
  const post = (path: string, body: string, provider = "openai") =>
    fetch(`${gateway.url}/v1${path}`, {
      method: "POST",
      headers: {
        "x-gateway-api-key": keyA,
        "x-gateway-provider": provider,
        "x-gateway-custom-host": `${openai.url}/v1`,
        authorization: `Bearer ${PROVIDER_KEY}`,
        "content-type": "application/json",
      },
      body,
    });

  it("answers 400 naming the param for bad bodies, before calling the provider", async () => {
    const before = openai.requests.length;
    for (const [path, body, param] of [
      ["/assistants", "{}", "model"],
      ["/assistants", '{"model": 5}', "model"],
      ["/threads/thread_x/runs", '{"assistant_id": 1}', "assistant_id"],
      ["/threads/runs", '{"thread": {}}', "assistant_id"],
      ["/threads/thread_x/messages", '{"role": "system", "content": "x"}', "role"],
      ["/vector_stores/vs_x/search", '{"query": 3}', "query"],
      ["/assistants", "[1, 2]", null],
    ] as const) {
      const response = await post(path, body);
      expect(response.status, `${path} ${body}`).toBe(400);
      expect((await response.json()).error.param, `${path} ${body}`).toBe(param);
    }
    expect(openai.requests.length).toBe(before);
  });

  it("answers 400 unsupported_route for a provider without the Assistants API", async () => {
    const response = await post("/assistants", '{"model": "claude"}', "anthropic");
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ code: "unsupported_route" });
  });

  it("still forwards /v1/proxy/assistants raw", async () => {
    const response = await fetch(`${gateway.url}/v1/proxy/assistants?limit=1`, {
      headers: {
        "x-gateway-api-key": keyA,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${openai.url}/v1`,
        authorization: `Bearer ${PROVIDER_KEY}`,
        "openai-beta": "assistants=v2",
      },
    });
    expect(response.status).toBe(200);
    expect((await response.json()).object).toBe("list");
  });
});
