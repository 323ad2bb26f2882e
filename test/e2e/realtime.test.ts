import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect as netConnect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { openRealtime } from "../helpers/realtime-client.ts";
import { REALTIME_KEY, type RealtimeMock, startRealtimeMock } from "../mocks/openai-realtime.ts";

/**
 * The realtime WebSocket proxy (core/realtime, core/platform/node/realtime-upgrade.ts) end to end: the `ws`
 * client and the openai SDK's realtime client through the local gateway to a mock of OpenAI's Realtime API.
 */

let gateway: TestGateway;
let upstream: RealtimeMock;

beforeAll(async () => {
  upstream = await startRealtimeMock();
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const wsUrl = (query = "?model=gpt-realtime") => `${gateway.url.replace(/^http/, "ws")}/v1/realtime${query}`;

function openaiHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "x-gateway-api-key": gateway.adminKey,
    "x-gateway-provider": "openai",
    "x-gateway-custom-host": `${upstream.url}/v1`,
    authorization: `Bearer ${REALTIME_KEY}`,
    ...extra,
  };
}

async function logOf(traceId: string, target = gateway): Promise<any> {
  const headers = { "x-gateway-api-key": target.adminKey };
  const poll = async () => {
    const list = await (await fetch(`${target.url}/v1/logs?trace_id=${traceId}`, { headers })).json();
    const id = list.data?.[0]?.id;
    return id ? (await fetch(`${target.url}/v1/logs/${id}`, { headers })).json() : undefined;
  };
  await expect.poll(poll, { timeout: 5000 }).toBeDefined();
  return poll();
}

/** gpt-realtime per million tokens: text 4 / cached 0.40 / out 16, audio 32 / out 64 (unit-prices/realtime.ts). */
const COST_PER_RESPONSE = (10 * 4 + 10 * 0.4 + 100 * 32 + 30 * 16 + 150 * 64) / 1_000_000;

describe("realtime sessions through the gateway", () => {
  it("relays a scripted session both ways in order, binary frames too, and logs its usage and cost", async () => {
    const traceId = `rt-${Date.now()}`;
    const before = upstream.connections.length;
    const client = await openRealtime(
      wsUrl(),
      openaiHeaders({ "x-gateway-trace-id": traceId, "openai-beta": "realtime=v1" }),
    );
    const created = await client.next("session.created");
    expect(created.session.model).toBe("gpt-realtime");

    client.send({ type: "session.update", session: { instructions: "Be brief." } });
    client.send({
      type: "conversation.item.create",
      item: { type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }] },
    });
    client.send({ type: "response.create" });
    const done = await client.next("response.done");
    expect(done.response.usage.total_tokens).toBe(300);
    client.ws.send(Buffer.from([1, 2, 3, 250]), { binary: true });
    expect([...(await client.nextBinary())]).toEqual([1, 2, 3, 250]);
    client.send({ type: "response.create" });
    await client.next("response.done");

    // Every server event arrived, in the order the provider sent them.
    const types = client.received.map((item) => (Buffer.isBuffer(item) ? "binary" : item.type));
    expect(types).toEqual([
      "session.created",
      "session.updated",
      "conversation.item.created",
      "response.created",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.done",
      "binary",
      "response.created",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.done",
    ]);
    const deltas = client.received.filter(
      (item) => !Buffer.isBuffer(item) && item.type === "response.output_text.delta",
    );
    expect(deltas.map((delta: any) => delta.delta).join("")).toBe("HelloHello");

    client.ws.close(1000, "done");
    const connection = upstream.connections[before]!;
    await connection.closed;
    expect(connection.closedWith).toEqual({ code: 1000, reason: "done" });
    // The client's events reached the provider unchanged and in order; its credentials only as the provider's.
    expect(connection.received.map((item) => (Buffer.isBuffer(item) ? "binary" : item.type))).toEqual([
      "session.update",
      "conversation.item.create",
      "response.create",
      "binary",
      "response.create",
    ]);
    expect(connection.received[0]).toEqual({ type: "session.update", session: { instructions: "Be brief." } });
    expect(connection.url).toBe("/v1/realtime?model=gpt-realtime");
    expect(connection.headers.authorization).toBe(`Bearer ${REALTIME_KEY}`);
    expect(connection.headers["openai-beta"]).toBe("realtime=v1");
    expect(connection.headers["x-gateway-api-key"]).toBeUndefined();
    expect(JSON.stringify(connection.headers)).not.toContain(gateway.adminKey);

    const log = await logOf(traceId);
    expect(log).toMatchObject({
      status: 101,
      provider: "openai",
      requestedModel: "gpt-realtime",
      answeredModel: "gpt-realtime",
      route: "/v1/realtime",
      usage: { promptTokens: 240, completionTokens: 360, totalTokens: 600, cachedTokens: 20 },
    });
    expect(log.cost).toBeCloseTo(2 * COST_PER_RESPONSE, 10);
    expect(log.error).toBeUndefined();
    expect(JSON.stringify(log)).not.toContain(REALTIME_KEY);
    expect(JSON.stringify(log)).not.toContain(gateway.adminKey);
  });

  it("refuses an upgrade without a gateway key with 401 and OpenAI's error body", async () => {
    const { "x-gateway-api-key": _, ...withoutKey } = openaiHeaders();
    const refused = await openRealtime(wsUrl(), withoutKey).catch((error) => error);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ type: expect.any(String), message: expect.stringContaining("API key") });
  });

  it("answers 400 naming the param for a missing provider, an Azure session without deployment, a private host", async () => {
    const noProvider = await openRealtime(wsUrl(), { "x-gateway-api-key": gateway.adminKey }).catch((e) => e);
    expect(noProvider.status).toBe(400);
    expect(noProvider.body.error.param).toBe("x-gateway-provider");

    const noDeployment = await openRealtime(wsUrl(""), {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": "azure-openai",
      "x-gateway-custom-host": upstream.url,
      authorization: `Bearer ${REALTIME_KEY}`,
    }).catch((e) => e);
    expect(noDeployment.status).toBe(400);
    expect(noDeployment.body.error.param).toBe("deployment");

    const metadataHost = await openRealtime(
      wsUrl(),
      openaiHeaders({ "x-gateway-custom-host": "http://169.254.169.254/v1" }),
    ).catch((e) => e);
    expect(metadataHost.status).toBe(400);
    expect(metadataHost.body.error.param).toBe("x-gateway-custom-host");

    const unsupported = await openRealtime(wsUrl(), openaiHeaders({ "x-gateway-provider": "anthropic" })).catch(
      (e) => e,
    );
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.error).toMatchObject({ code: "unsupported_route", param: "x-gateway-provider" });
  });

  it("answers the provider's refusal with its status, and logs it without the key", async () => {
    const traceId = `rt-refused-${Date.now()}`;
    const refused = await openRealtime(
      wsUrl(),
      openaiHeaders({ authorization: "Bearer sk-wrong-key", "x-gateway-trace-id": traceId }),
    ).catch((e) => e);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe("Incorrect API key provided.");
    const log = await logOf(traceId);
    expect(log.status).toBe(401);
    expect(JSON.stringify(log)).not.toContain("sk-wrong-key");
  });

  it("refuses with 429 when a rate-limit policy is exhausted", async () => {
    const workspace = await seedWorkspace(gateway, "realtime");
    const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "realtime key",
      workspace_id: workspace.id,
    });
    const policy = await call(gateway, gateway.adminKey, "POST", "/v2/policies/rate-limits", {
      name: "One realtime session",
      conditions: [{ key: "api_key", value: key.id }],
      group_by: [{ key: "api_key" }],
      type: "requests",
      unit: "rpd",
      value: 1,
    });
    expect(policy.status).toBe(201);
    const first = await openRealtime(wsUrl(), openaiHeaders({ "x-gateway-api-key": key.key }));
    await first.next("session.created");
    first.ws.close();
    const second = await openRealtime(wsUrl(), openaiHeaders({ "x-gateway-api-key": key.key })).catch((e) => e);
    expect(second.status).toBe(429);
    expect(second.body.error).toMatchObject({ code: "rate_limit_exceeded" });
    expect(second.body.error.message).toContain("One realtime session");
  });

  it("keeps a session's log in its workspace: another workspace's key cannot see it", async () => {
    const [mine, theirs] = await Promise.all([
      seedWorkspace(gateway, "realtime mine"),
      seedWorkspace(gateway, "rt other"),
    ]);
    const keyOf = (workspace: { id: string }, name: string) =>
      createKey(gateway, gateway.adminKey, "workspace", "service", {
        name,
        workspace_id: workspace.id,
        scopes: ["logs.list", "logs.view"],
      });
    const [own, other] = await Promise.all([keyOf(mine, "rt mine"), keyOf(theirs, "rt theirs")]);
    const traceId = `rt-isolation-${Date.now()}`;
    const client = await openRealtime(
      wsUrl(),
      openaiHeaders({ "x-gateway-api-key": own.key, "x-gateway-trace-id": traceId }),
    );
    await client.next("session.created");
    client.ws.close(1000);
    await client.closed;
    const list = async (key: string) =>
      (
        await (
          await fetch(`${gateway.url}/v1/logs?trace_id=${traceId}`, { headers: { "x-gateway-api-key": key } })
        ).json()
      ).data as Array<{ id: string }>;
    await expect.poll(async () => (await list(own.key)).length).toBe(1);
    const [log] = await list(own.key);
    expect(await list(other.key)).toEqual([]);
    const read = await fetch(`${gateway.url}/v1/logs/${log!.id}`, { headers: { "x-gateway-api-key": other.key } });
    expect(read.status).toBe(404);
  });

  it("closes the provider's socket with the client's code, and the client's with the provider's", async () => {
    const before = upstream.connections.length;
    const client = await openRealtime(wsUrl(), openaiHeaders());
    await client.next("session.created");
    client.ws.close(4001, "client leaves");
    const connection = upstream.connections[before]!;
    await connection.closed;
    expect(connection.closedWith).toEqual({ code: 4001, reason: "client leaves" });

    const traceId = `rt-upstream-close-${Date.now()}`;
    const other = await openRealtime(wsUrl(), openaiHeaders({ "x-gateway-trace-id": traceId }));
    await other.next("session.created");
    other.send({ type: "test.close", code: 4002, reason: "provider ends it" });
    expect(await other.closed).toEqual({ code: 4002, reason: "provider ends it" });
    const log = await logOf(traceId);
    expect(log.status).toBe(101);
    expect(log.error).toMatchObject({ code: "websocket_close_4002" });
  });

  it("opens Azure OpenAI's realtime URL with its api-key", async () => {
    const before = upstream.connections.length;
    const client = await openRealtime(wsUrl("?deployment=my-realtime"), {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": "azure-openai",
      "x-gateway-custom-host": upstream.url,
      authorization: `Bearer ${REALTIME_KEY}`,
    });
    await client.next("session.created");
    client.ws.close();
    const connection = upstream.connections[before]!;
    expect(connection.url).toBe("/openai/realtime?api-version=2024-10-01-preview&deployment=my-realtime");
    expect(connection.headers["api-key"]).toBe(REALTIME_KEY);
    expect(connection.headers.authorization).toBeUndefined();
  });

  it("falls back to the next target of a config when the first refuses the upgrade", async () => {
    const before = upstream.connections.length;
    const config = {
      strategy: { mode: "fallback" },
      targets: [
        { provider: "openai", api_key: "sk-bad", custom_host: `${upstream.url}/v1` },
        { provider: "openai", api_key: REALTIME_KEY, custom_host: `${upstream.url}/v1` },
      ],
    };
    const client = await openRealtime(wsUrl(), {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-config": JSON.stringify(config),
    });
    await client.next("session.created");
    client.ws.close();
    expect(upstream.connections.length).toBe(before + 1);
  });

  it("answers a plain GET with 426", async () => {
    const response = await fetch(`${gateway.url}/v1/realtime`, { headers: { "x-gateway-api-key": gateway.adminKey } });
    expect(response.status).toBe(426);
    expect((await response.json()).error.code).toBe("upgrade_required");
  });

  it("answers 404 to an upgrade of another path", async () => {
    const refused = await openRealtime(`${gateway.url.replace(/^http/, "ws")}/v1/elsewhere`, openaiHeaders()).catch(
      (e) => e,
    );
    expect(refused.status).toBe(404);
  });
});

describe("a message over GATEWAY_REALTIME_MAX_MESSAGE_BYTES", () => {
  const LIMIT = 64 * 1024;
  let small: TestGateway;

  beforeAll(async () => {
    small = await startTestGateway({ GATEWAY_REALTIME_MAX_MESSAGE_BYTES: String(LIMIT) });
  });

  afterAll(async () => {
    await small?.close();
  });

  const open = async (traceId: string) => {
    const before = upstream.connections.length;
    const url = `${small.url.replace(/^http/, "ws")}/v1/realtime?model=gpt-realtime`;
    const headers = { ...openaiHeaders({ "x-gateway-trace-id": traceId }), "x-gateway-api-key": small.adminKey };
    const client = await openRealtime(url, headers);
    await client.next("session.created");
    return { client, connection: upstream.connections[before]! };
  };

  it("closes both sides with 1009 (Message Too Big) whichever side sent it, and logs it", async () => {
    const fromClient = await open(`rt-too-big-client-${Date.now()}`);
    fromClient.client.ws.send(Buffer.alloc(LIMIT + 1, 0x62), { binary: true });
    expect((await fromClient.client.closed).code).toBe(1009);
    await fromClient.connection.closed;
    expect(fromClient.connection.closedWith?.code).toBe(1009);

    const traceId = `rt-too-big-provider-${Date.now()}`;
    const fromProvider = await open(traceId);
    fromProvider.client.send({ type: "test.large", bytes: LIMIT + 1 });
    expect((await fromProvider.client.closed).code).toBe(1009);
    await fromProvider.connection.closed;
    expect(fromProvider.connection.closedWith?.code).toBe(1009);
    expect((await logOf(traceId, small)).error).toMatchObject({ code: "websocket_close_1009" });
  });

  it("relays a message at the limit", async () => {
    const { client } = await open(`rt-at-limit-${Date.now()}`);
    client.ws.send(Buffer.alloc(LIMIT, 0x63), { binary: true });
    expect((await client.nextBinary()).byteLength).toBe(LIMIT);
    client.ws.close(1000);
  });
});

describe("the openai SDK's realtime client (OpenAIRealtimeWS)", () => {
  // The SDK always connects with wss://: a TLS front (self-signed, trusted by the test) passes bytes to the gateway.
  let dir: string;
  let tls: TlsServer;
  let cert: Buffer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "realtime-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    cert = readFileSync(join(dir, "cert.pem"));
    const port = Number(new URL(gateway.url).port);
    tls = createTlsServer({ key: readFileSync(join(dir, "key.pem")), cert }, (socket) => {
      const inner = netConnect(port, "127.0.0.1");
      socket.pipe(inner).pipe(socket);
      socket.on("error", () => inner.destroy());
      inner.on("error", () => socket.destroy());
    });
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => tls?.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a session through the gateway with the gateway key in defaultHeaders", async () => {
    const traceId = `rt-sdk-${Date.now()}`;
    const client = new OpenAI({
      apiKey: REALTIME_KEY,
      baseURL: `https://127.0.0.1:${(tls.address() as AddressInfo).port}/v1`,
      defaultHeaders: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${upstream.url}/v1`,
        "x-gateway-trace-id": traceId,
      },
    });
    const rt = new OpenAIRealtimeWS({ model: "gpt-realtime", options: { ca: cert } }, client);
    const events: string[] = [];
    rt.on("event", (event) => events.push(event.type));
    const errors: unknown[] = [];
    rt.on("error", (error) => errors.push(error));
    await new Promise<void>((resolve) => rt.socket.once("open", () => resolve()));
    rt.send({
      type: "conversation.item.create",
      item: { type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }] },
    });
    rt.send({ type: "response.create" });
    const done = await new Promise<any>((resolve) => rt.on("response.done", resolve));
    expect(done.response.usage.total_tokens).toBe(300);
    rt.close();
    expect(errors).toEqual([]);
    expect(events).toEqual([
      "session.created",
      "conversation.item.created",
      "response.created",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.done",
    ]);
    const log = await logOf(traceId);
    expect(log).toMatchObject({ status: 101, provider: "openai", usage: { totalTokens: 300 } });
    expect(log.cost).toBeCloseTo(COST_PER_RESPONSE, 10);
  });
});
