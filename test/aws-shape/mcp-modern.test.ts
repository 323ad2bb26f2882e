import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectModernClient,
  type ModernEndpoint,
  modernEnvelope,
  modernPost,
  modernRequest,
} from "../helpers/mcp-modern-client.ts";
import { type ModernUpstream, startModernUpstream } from "../helpers/mcp-modern-upstream.ts";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.ts";
import type { AwsShape } from "./shape.ts";
import { startShapeTarget } from "./target.ts";

/**
 * The MCP gateway on the 2026-07-28 revision through the whole AWS shape (issue 44's "done when"): the MCP SDK v2
 * client pinned to that revision talks to the Router, which sends `/mcp/<server>` to the mcp function's instances
 * (two or more, requests going round them; `x-shape-instance` says which served each). The server is registered
 * through the control plane (the mcp-admin function), as an admin would. Listing, calling, reading and the Tasks
 * extension each land on more than one instance: nothing may live in one instance's memory, and the `Mcp-Method` /
 * `Mcp-Name` headers must cross CloudFront. A task's call keeps the instance that started it busy (its invocation
 * lasts until the call ends), so its polls and its cancel are served by another instance. A tool call longer than
 * CloudFront's read timeout (8 s here, 60 s on AWS) reaches the client whole: its answer streams keep-alive comments.
 */

let shape: AwsShape;
let close: () => Promise<void>;
let modern: ModernUpstream;
/** A 2025-era upstream that keeps sessions: the gateway bridges each stateless request to a session of its own. */
let legacy: McpUpstream;
let endpoint: ModernEndpoint;
let legacyEndpoint: ModernEndpoint;
let otherKey: string;
let mcpFunction: string;

/** Every MCP request the tests sent, with the instance of the mcp function that answered it. */
const served: Array<{ method: string; name: string | null; instance: string | null; status: number }> = [];

/** The transport's fetch, noting what each request asked (its Mcp-Method, Mcp-Name) and where it landed. */
const recordingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const headers = new Headers(init?.headers);
  served.push({
    method: headers.get("mcp-method") ?? "(none)",
    name: headers.get("mcp-name"),
    instance: response.headers.get("x-shape-instance"),
    status: response.status,
  });
  return response;
};

/** A control-plane call through the Router. */
async function api(key: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${shape.url}${path}`, {
    method,
    headers: { "x-gateway-api-key": key, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

beforeAll(async () => {
  [modern, legacy] = await Promise.all([startModernUpstream(), startMcpUpstream({ stateful: true })]);
  // A call still running after 300 ms becomes a task (the default is 5 s), so a task takes a second or two here;
  // CloudFront gives up after 8 s without a byte, and a tool call's answer sends one every second meanwhile.
  const target = await startShapeTarget({
    environment: { MCP_TASK_AFTER_MS: "300", MCP_SSE_KEEPALIVE_MS: "1000" },
    readTimeoutSeconds: 8,
    realtime: false,
  });
  shape = target.shape;
  close = target.close;
  mcpFunction = [...shape.functions.values()].find((fn) => fn.definition.entry === "functions/mcp.ts")!.definition.name;
  // Registered as an admin would: a workspace, its keys, the upstream synced, one tool switched off, a server.
  const workspace = await api(shape.adminKey, "POST", "/v1/admin/workspaces", { name: "MCP on the shape" });
  const keyOf = async (name: string) =>
    (
      await api(shape.adminKey, "POST", "/v1/api-keys/workspace/service", {
        name,
        workspace_id: workspace.id,
        scopes: ["*"],
      })
    ).key as string;
  const key = await keyOf("mcp-shape");
  otherKey = await keyOf("mcp-shape-other");
  const register = async (url: string, slug: string): Promise<ModernEndpoint> => {
    const integration = await api(key, "POST", "/v1/mcp-integrations", {
      name: `Upstream ${slug}`,
      slug: `${slug}-upstream`,
      url,
      auth_type: "none",
      transport: "http",
    });
    await api(key, "POST", `/v1/mcp-integrations/${integration.id}/sync`, {});
    await api(key, "PUT", `/v1/mcp-integrations/${integration.id}/capabilities`, {
      capabilities: [{ name: "secret_admin_tool", type: "tool", enabled: false }],
    });
    const server = await api(key, "POST", "/v1/mcp-servers", { name: slug, mcp_integration_id: integration.id, slug });
    return { url: `${shape.url}/mcp/${server.slug}`, headers: { "x-gateway-api-key": key }, fetch: recordingFetch };
  };
  endpoint = await register(modern.url, "shape-modern");
  legacyEndpoint = await register(legacy.url, "shape-legacy");
}, 600_000);

afterAll(async () => {
  // Where the requests went, for the record (a task's id, a bearer handle, left out).
  const named = (entry: (typeof served)[number]) =>
    entry.name && !entry.method.startsWith("tasks/") ? entry.name : "";
  const trail = served.map((entry) => `${entry.method}${named(entry) ? `(${named(entry)})` : ""}@${entry.instance}`);
  console.log(`mcp requests and the instances that served them: ${trail.join(" ")}`);
  await close?.();
  await Promise.all([modern?.close(), legacy?.close()]);
});

/** The instances that served the requests recorded from `from` on. */
const instancesSince = (from: number) => new Set(served.slice(from).map((entry) => entry.instance));
/** The instance that answered the latest request. */
const lastInstance = () => served.at(-1)!.instance;

describe.each([
  { upstream: "a 2026-07-28 upstream", to: () => endpoint, readme: "read me", note: "note 7" },
  {
    upstream: "a session-keeping 2025 upstream (bridged)",
    to: () => legacyEndpoint,
    readme: "The readme.",
    note: "Note 7",
  },
])("a 2026-07-28 MCP client through the AWS shape to $upstream", ({ to, readme: readmeText, note: noteText }) => {
  it("lists and calls tools and reads resources with no handshake, over at least two instances", async () => {
    const from = served.length;
    const client = await connectModernClient(to());
    expect(client.getProtocolEra()).toBe("modern");
    const { tools } = await client.listTools(undefined, { cacheMode: "bypass" });
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "add"]));
    expect(names).not.toContain("secret_admin_tool");
    const called = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
    expect(called.structuredContent).toEqual({ sum: 42 });
    const readme = await client.readResource({ uri: "memo://readme" }, { cacheMode: "bypass" });
    expect(readme.contents).toEqual([expect.objectContaining({ uri: "memo://readme", text: readmeText })]);
    const note = await client.readResource({ uri: "memo://notes/7" }, { cacheMode: "bypass" });
    expect(note.contents).toEqual([expect.objectContaining({ text: noteText })]);
    await client.close();

    const requests = served.slice(from);
    // No handshake: every request is one of the calls above, each named in its headers.
    expect(requests.filter((entry) => entry.method !== "server/discover").map((entry) => entry.method)).toEqual([
      "tools/list",
      "tools/call",
      "resources/read",
      "resources/read",
    ]);
    expect(requests.find((entry) => entry.method === "tools/call")?.name).toBe("add");
    for (const entry of requests) {
      expect(entry.status).toBe(200);
      expect(entry.instance).toMatch(new RegExp(`^${mcpFunction}#`));
    }
    // With no session, any instance serves any request: these went round at least two.
    expect(instancesSince(from).size).toBeGreaterThanOrEqual(2);
    // Each instance ended the upstream session it opened for its request (none is left open on the upstream).
    await expect.poll(() => legacy.openSessions(), { timeout: 5_000, interval: 100 }).toBe(0);
  });
});

describe("Mcp-Method and Mcp-Name through the Router", () => {
  it("refuses a call whose Mcp-Name disagrees with its body: the headers crossed CloudFront", async () => {
    const before = modern.toolCalls.length;
    const answer = await modernPost(
      endpoint,
      { "mcp-method": "tools/call", "mcp-name": "echo" },
      {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "add", arguments: { a: 1, b: 1 }, _meta: modernEnvelope() },
      },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe(-32020);
    expect(answer.headers.get("x-shape-instance")).toMatch(new RegExp(`^${mcpFunction}#`));
    expect(modern.toolCalls.length).toBe(before);
  });
});

describe("a tool call longer than CloudFront's read timeout", () => {
  it("reaches a 2026-07-28 and a 2025-era SDK client whole: its answer streams comments while it runs", async () => {
    const modernClient = await connectModernClient(endpoint);
    const legacyClient = new LegacyClient({ name: "legacy-test", version: "1.0.0" });
    await legacyClient.connect(
      new LegacyTransport(new URL(endpoint.url), { requestInit: { headers: endpoint.headers } }),
    );
    const started = Date.now();
    // Neither declares the Tasks extension: the call is answered when it ends, 10 s later.
    const answers = await Promise.all(
      [modernClient, legacyClient].map((client) => client.callTool({ name: "slow", arguments: { ms: 10_000 } })),
    );
    expect(Date.now() - started).toBeGreaterThan(10_000);
    for (const answer of answers) expect(answer.content).toEqual([{ type: "text", text: "waited 10000 ms" }]);
    await Promise.all([modernClient.close(), legacyClient.close()]);
  }, 40_000);
});

describe("a Task across the mcp function's instances", () => {
  const startSlow = (ms: number) => modernRequest(endpoint, "tools/call", { name: "slow", arguments: { ms } });
  const getTask = (taskId: string, key?: string) =>
    modernRequest(key ? { ...endpoint, headers: { "x-gateway-api-key": key } } : endpoint, "tasks/get", { taskId });

  /** Polls the task until it leaves `working`, noting the instances that answered the polls. */
  async function untilSettled(taskId: string, polledOn: Set<string | null>) {
    let task = await getTask(taskId);
    polledOn.add(lastInstance());
    for (let attempt = 0; attempt < 100 && task.status === "working"; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      task = await getTask(taskId);
      polledOn.add(lastInstance());
    }
    return task;
  }

  it("is started on one instance, polled on another while the first runs it, and its result read", async () => {
    const created = await startSlow(2500);
    const startedOn = lastInstance();
    expect(created).toMatchObject({ resultType: "task", status: "working" });
    expect(created.taskId).toMatch(/^mcptask-/);
    // The instance running the call is busy: the poll goes to another, which reads the task from the table.
    expect((await getTask(created.taskId)).status).toBe("working");
    expect(lastInstance()).not.toBe(startedOn);
    const polledOn = new Set([lastInstance()]);
    const task = await untilSettled(created.taskId, polledOn);
    expect(task).toMatchObject({ status: "completed", resultType: "complete" });
    expect(task.result.content).toEqual([{ type: "text", text: "waited 2500 ms" }]);
    for (const instance of [startedOn, ...polledOn]) expect(instance).toMatch(new RegExp(`^${mcpFunction}#`));
    // Only the key that started it sees it, on whichever instance.
    await expect(getTask(created.taskId, otherKey)).rejects.toMatchObject({ code: -32602 });
  });

  it("is cancelled from another instance: the first aborts the upstream call and the task reads cancelled", async () => {
    const aborted = modern.slowCalls.filter((end) => end === "aborted").length;
    const created = await startSlow(60_000);
    const startedOn = lastInstance();
    expect(created.status).toBe("working");
    expect(await modernRequest(endpoint, "tasks/cancel", { taskId: created.taskId })).toMatchObject({
      resultType: "complete",
    });
    expect(lastInstance()).not.toBe(startedOn);
    const task = await untilSettled(created.taskId, new Set());
    expect(task.status).toBe("cancelled");
    await expect
      .poll(() => modern.slowCalls.filter((end) => end === "aborted").length, { timeout: 10_000, interval: 100 })
      .toBe(aborted + 1);
    // The starting instance let go of its invocation: it serves requests again (or was recycled, which happens
    // to an environment only between invocations).
    const pool = shape.functions.get(mcpFunction)!.pool;
    const released = () => lastInstance() === startedOn || !pool.instanceIds.includes(startedOn!);
    for (let attempt = 0; attempt < 6 && !released(); attempt++)
      expect((await modernRequest(endpoint, "tools/list", {})).tools.length).toBeGreaterThan(0);
    expect(released()).toBe(true);
  });
});
