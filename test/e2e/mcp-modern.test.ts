import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpServer } from "../../core/features/mcp/records.ts";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { connectModernClient, modernEnvelope, modernPost, modernRequest } from "../helpers/mcp-modern-client.ts";
import { LIST_TTL_MS, type ModernUpstream, startModernUpstream } from "../helpers/mcp-modern-upstream.ts";
import { seedMcpServer } from "../helpers/mcp-records.ts";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.ts";
import { startSecondInstance } from "../helpers/second-instance.ts";

/**
 * The MCP gateway on the 2026-07-28 revision, driven by the MCP SDK v2 client pinned to it (no initialize, no
 * session, per-request `_meta`, `Mcp-Method` / `Mcp-Name` headers): through one gateway to a 2026-07-28
 * upstream and to a 2025-era one (the gateway bridges), listing and calling tools, reading resources and
 * getting prompts; the header-routed refusals; the `ttlMs` cache of listings; and the Tasks extension across
 * two gateway instances on the same stores (a task started on one is polled and cancelled from the other).
 */

let first: TestGateway;
let second: Awaited<ReturnType<typeof startSecondInstance>>;
let modern: ModernUpstream;
let legacy: McpUpstream;
let modernServer: McpServer;
let legacyServer: McpServer;
let key: string;
let otherKey: string;

function connect(gateway: { url: string }, server: McpServer, apiKey = key): Promise<Client> {
  return connectModernClient({ url: `${gateway.url}/mcp/${server.slug}`, headers: { "x-gateway-api-key": apiKey } });
}

/** A raw 2026-07-28 POST, headers as given (to show what the gateway does with them). */
function rawPost(gateway: { url: string }, server: McpServer, headers: Record<string, string>, body: unknown) {
  return modernPost({ url: `${gateway.url}/mcp/${server.slug}`, headers: { "x-gateway-api-key": key } }, headers, body);
}

const envelope = modernEnvelope();

beforeAll(async () => {
  modern = await startModernUpstream();
  legacy = await startMcpUpstream();
  // Two gateway instances over the same stores (the local stand-in for two Lambda instances of a function).
  const env = { MCP_TASK_AFTER_MS: "300", MCP_SSE_KEEPALIVE_MS: "500" };
  first = await startTestGateway(env);
  second = await startSecondInstance(first, env);
  const workspace = await seedWorkspace(first, "MCP modern");
  const other = await seedWorkspace(first, "MCP modern other");
  key = (
    await createKey(first, first.adminKey, "workspace", "service", {
      name: "modern",
      workspace_id: workspace.id,
      scopes: ["*"],
    })
  ).key;
  otherKey = (
    await createKey(first, first.adminKey, "workspace", "service", {
      name: "other",
      workspace_id: workspace.id,
      scopes: ["*"],
    })
  ).key;
  void other;
  ({ server: modernServer } = await seedMcpServer(first, {
    url: modern.url,
    workspaceId: workspace.id,
    disabled: ["secret_admin_tool"],
  }));
  ({ server: legacyServer } = await seedMcpServer(first, {
    url: legacy.url,
    workspaceId: workspace.id,
    disabled: ["secret_admin_tool"],
  }));
}, 60_000);

afterAll(async () => {
  await second?.close();
  await first?.close();
  await modern?.close();
  await legacy?.close();
});

describe.each([
  { label: "a 2026-07-28 upstream", server: () => modernServer },
  { label: "a 2025-era upstream (bridged)", server: () => legacyServer },
])("a 2026-07-28 client through the gateway to $label", ({ server }) => {
  it("lists the allowed tools and calls one, with no handshake and no session", async () => {
    const client = await connect(first, server());
    expect(client.getProtocolEra()).toBe("modern");
    const { tools } = await client.listTools(undefined, { cacheMode: "bypass" });
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "add"]));
    expect(names).not.toContain("secret_admin_tool");
    const result = await client.callTool({ name: "echo", arguments: { text: "modern" } });
    expect(result.content).toEqual([{ type: "text", text: "echo: modern" }]);
    await client.close();
  });

  it("reads resources (and a template's expansion) and gets prompts", async () => {
    const client = await connect(first, server());
    const read = await client.readResource({ uri: "memo://readme" }, { cacheMode: "bypass" });
    expect(read.contents[0]).toMatchObject({ uri: "memo://readme" });
    const note = await client.readResource({ uri: "memo://notes/7" }, { cacheMode: "bypass" });
    expect(JSON.stringify(note.contents)).toContain("7");
    const prompt = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
    expect(JSON.stringify(prompt.messages)).toContain("Ada");
    await client.close();
  });
});

describe("Mcp-Method and Mcp-Name", () => {
  it("refuses a hidden tool named in Mcp-Name before anything reaches the upstream", async () => {
    const before = modern.toolCalls.length;
    const answer = await rawPost(
      first,
      modernServer,
      { "mcp-method": "tools/call", "mcp-name": "secret_admin_tool" },
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "secret_admin_tool", arguments: {}, _meta: envelope },
      },
    );
    expect(answer.body.error.code).toBe(-32602);
    expect(modern.toolCalls.length).toBe(before);
  });

  it("answers HeaderMismatch (400, -32020) when Mcp-Name disagrees with the body", async () => {
    const before = modern.toolCalls.length;
    const answer = await rawPost(
      first,
      modernServer,
      { "mcp-method": "tools/call", "mcp-name": "echo" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "secret_admin_tool", arguments: {}, _meta: envelope },
      },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe(-32020);
    expect(modern.toolCalls.length).toBe(before);
  });

  it("logs the method and tool the headers named", async () => {
    const client = await connect(first, modernServer);
    await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    await client.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const logs = await fetch(`${first.url}/v1/logs?limit=50`, { headers: { "x-gateway-api-key": key } }).then((r) =>
      r.json(),
    );
    const entry = logs.data.find((log: any) => log.mcp?.name === "add");
    expect(entry.mcp.method).toBe("tools/call");
  });
});

describe("one rule for listing and calling", () => {
  it("lists exactly the tools a call may use: every listed tool is callable, every other one refused", async () => {
    const client = await connect(first, modernServer);
    const listed = new Set((await client.listTools(undefined, { cacheMode: "bypass" })).tools.map((tool) => tool.name));
    for (const name of ["echo", "add", "slow", "secret_admin_tool", "no_such_tool"]) {
      const args = name === "add" ? { a: 1, b: 2 } : name === "slow" ? { ms: 1 } : { text: "x" };
      const outcome = await client.callTool({ name, arguments: args }).then(
        () => "called",
        (error: { code?: number }) => (error.code === -32602 ? "refused" : `error ${error.code}`),
      );
      expect(outcome, name).toBe(listed.has(name) ? "called" : "refused");
    }
    await client.close();
  });

  it("limits one tool by its name (a policy on metadata.mcp_tool), the others untouched", async () => {
    const limited = (
      await createKey(first, first.adminKey, "workspace", "service", {
        name: "per-tool",
        workspace_id: modernServer.workspaceId,
        scopes: ["*"],
      })
    ).key;
    const keyId = (await first.gateway.services.apiKeys.authenticate(limited)).keyId!;
    const policy = await fetch(`${first.url}/v2/policies/rate-limits`, {
      method: "POST",
      headers: { "x-gateway-api-key": first.adminKey, "content-type": "application/json" },
      body: JSON.stringify({
        name: "One add a day",
        conditions: [
          { key: "api_key", value: keyId },
          { key: "metadata.mcp_tool", value: "add" },
        ],
        group_by: [{ key: "api_key" }],
        type: "requests",
        unit: "rpd",
        value: 1,
      }),
    });
    expect(policy.status).toBe(201);
    const client = await connect(first, modernServer, limited);
    await client.callTool({ name: "add", arguments: { a: 1, b: 1 } });
    const refused = await client.callTool({ name: "add", arguments: { a: 2, b: 2 } }).catch((error) => error);
    // The SDK surfaces the HTTP status and the JSON-RPC error the gateway answered with.
    expect(refused.data.status).toBe(429);
    expect(String(refused.message)).toContain("One add a day");
    expect((await client.callTool({ name: "echo", arguments: { text: "free" } })).content).toEqual([
      { type: "text", text: "echo: free" },
    ]);
    await client.close();
  });
});

describe("a tool call that outlasts a proxy's read timeout", () => {
  it.each(["2026-07-28", "2025-11-25"])(
    "is answered as an event stream with keep-alive comments before its result (%s)",
    async (version) => {
      const modernEra = version === "2026-07-28";
      const response = await fetch(`${first.url}/mcp/${modernServer.slug}`, {
        method: "POST",
        headers: {
          "x-gateway-api-key": key,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": version,
          ...(modernEra ? { "mcp-method": "tools/call", "mcp-name": "slow" } : {}),
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/call",
          params: { name: "slow", arguments: { ms: 1800 }, ...(modernEra ? { _meta: envelope } : {}) },
        }),
      });
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const chunks: string[] = [];
      const decoder = new TextDecoder();
      for await (const chunk of response.body!) chunks.push(decoder.decode(chunk, { stream: true }));
      // Bytes flow while the call runs (MCP_SSE_KEEPALIVE_MS), so no read timeout sees an idle answer.
      expect(chunks[0]).toMatch(/^: keepalive\n\n/);
      expect(chunks[0]).not.toContain("waited");
      const text = chunks.join("");
      expect(text.match(/^: keepalive$/gm)?.length).toBeGreaterThanOrEqual(2);
      const result = JSON.parse(/^data: (.*)$/m.exec(text)![1]!).result;
      expect(result.content).toEqual([{ type: "text", text: "waited 1800 ms" }]);
    },
  );
});

describe("the ttlMs cache of listings", () => {
  it("serves a listing from the cache while the upstream's ttlMs says it is fresh", async () => {
    const client = await connect(first, modernServer);
    await client.listTools(undefined, { cacheMode: "bypass" });
    const before = modern.methods.filter((method) => method === "tools/list").length;
    const again = await client.listTools(undefined, { cacheMode: "bypass" });
    expect(again.tools.length).toBeGreaterThan(0);
    expect(modern.methods.filter((method) => method === "tools/list").length).toBe(before);
    const raw = await rawPost(
      first,
      modernServer,
      { "mcp-method": "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: envelope } },
    );
    expect(raw.body.result.ttlMs).toBeGreaterThan(0);
    expect(raw.body.result.ttlMs).toBeLessThanOrEqual(LIST_TTL_MS);
    expect(raw.body.result.cacheScope).toBe("private");
    await client.close();
  });
});

/** A request through the SDK's 2026-07-28 transport, declaring the Tasks extension while `declared` is true. */
function sdkRequest(gateway: { url: string }, apiKey: string, method: string, params: Record<string, unknown>) {
  const endpoint = { url: `${gateway.url}/mcp/${modernServer.slug}`, headers: { "x-gateway-api-key": apiKey } };
  return modernRequest(endpoint, method, params, { tasks: declared });
}
let declared = true;

describe("Tasks across two gateway instances", () => {
  const startTask = (ms: number) => sdkRequest(first, key, "tools/call", { name: "slow", arguments: { ms } });
  const getTask = (on: { url: string }, taskId: string, apiKey = key) =>
    sdkRequest(on, apiKey, "tasks/get", { taskId });
  const untilSettled = async (taskId: string) => {
    let task = await getTask(second, taskId);
    for (let i = 0; i < 60 && task.status === "working"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      task = await getTask(second, taskId);
    }
    return task;
  };

  it("answers a long call with a task started on one instance, completed and read on the other", async () => {
    const created = await startTask(1500);
    expect(created.resultType).toBe("task");
    expect(created.status).toBe("working");
    expect(created.taskId).toMatch(/^mcptask-/);
    expect((await getTask(second, created.taskId)).status).toBe("working");
    const task = await untilSettled(created.taskId);
    expect(task.status).toBe("completed");
    expect(task.resultType).toBe("complete");
    expect(task.result.content).toEqual([{ type: "text", text: "waited 1500 ms" }]);
    // The task id is a bearer handle: its polls are logged under a hash of it, never the id.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const logs = await fetch(`${second.url}/v1/logs?limit=100`, { headers: { "x-gateway-api-key": key } }).then((r) =>
      r.json(),
    );
    const polls = logs.data.filter((log: any) => log.mcp?.method === "tasks/get");
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((log: any) => /^sha256:[0-9a-f]{16}$/.test(log.mcp.name))).toBe(true);
    expect(JSON.stringify(logs)).not.toContain(created.taskId);
  });

  it("cancels from the other instance: the upstream call is aborted and the task reads cancelled", async () => {
    const aborted = modern.slowCalls.filter((end) => end === "aborted").length;
    const created = await startTask(8000);
    expect(await sdkRequest(second, key, "tasks/cancel", { taskId: created.taskId })).toMatchObject({
      resultType: "complete",
    });
    const task = await untilSettled(created.taskId);
    expect(task.status).toBe("cancelled");
    for (let i = 0; i < 20 && modern.slowCalls.filter((end) => end === "aborted").length === aborted; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(modern.slowCalls.filter((end) => end === "aborted").length).toBe(aborted + 1);
  });

  it("shows a task only to the key that started it, and never to a caller without the extension", async () => {
    const created = await startTask(600);
    await expect(getTask(second, created.taskId, otherKey)).rejects.toMatchObject({ code: -32602 });
    declared = false;
    try {
      await expect(getTask(second, created.taskId)).rejects.toMatchObject({ code: -32021 });
      // Without the extension a long call is answered in full, never as a task.
      const direct = await sdkRequest(first, key, "tools/call", { name: "slow", arguments: { ms: 500 } });
      expect(direct.content).toEqual([{ type: "text", text: "waited 500 ms" }]);
    } finally {
      declared = true;
    }
  });
});
