import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf, userMessage, withKey } from "../helpers/a2a-client.ts";
import { type EchoAgent, startEchoAgent } from "../helpers/a2a-echo-agent.ts";
import { startSdkAgent } from "../helpers/a2a-sdk-agent.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/**
 * A2A 1.0 and 0.3 through the gateway (issue 40 item 7, issue 44 part 2): an agent serving the card the current
 * `@a2a-js/sdk` serves (`supportedInterfaces`, no top-level `url`) and one serving a 0.3 card (`url`, 0.3 wire
 * only) are registered, then invoked, streamed and cancelled through the gateway by the SDK's 1.0 client and by
 * its 0.3 transport. The gateway calls each upstream in the version its stored card offers (`A2A-Version: 1.0`
 * to the 1.0 agent, 0.3 method names to the other), negotiates the caller's `A2A-Version`, and keeps calling the
 * card it registered even when the agent later self-reports another endpoint.
 */

let gateway: TestGateway;
let modern: EchoAgent;
let legacy: EchoAgent;
let key: string;

async function clientFor(slug: string): Promise<Client> {
  const fetchImpl = withKey(key);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(`${gateway.url}/v1/agents/${slug}/.well-known/agent-card.json`, "");
}

/** What the upstream agent received since `from`: its A2A-Version header and JSON-RPC method per POST. */
const upstreamCalls = (agent: EchoAgent, from: number) =>
  agent.requests
    .slice(from)
    .filter((request) => request.method === "POST")
    .map((request) => ({
      path: request.path,
      version: request.headers["a2a-version"],
      method: JSON.parse(request.body ?? "{}").method as string,
    }));

beforeAll(async () => {
  gateway = await startTestGateway();
  modern = await startEchoAgent({ cardShape: "1.0" });
  legacy = await startEchoAgent({ cardShape: "0.3" });
  const workspace = (await seedWorkspace(gateway, "A2A versions")).id;
  key = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "a2a-versions",
      workspace_id: workspace,
      scopes: ["agent_integrations.create", "agent_integrations.read", "agents.invoke", "logs.list", "logs.view"],
    })
  ).key;
});

afterAll(async () => {
  await gateway?.close();
  await modern?.close();
  await legacy?.close();
});

describe("registering cards of both versions", () => {
  it("accepts the current SDK's 1.0 card (supportedInterfaces, no url) and a 0.3 card", async () => {
    expect(modern.card.url).toBeUndefined();
    const created = await call(gateway, key, "POST", "/v2/agent-integrations", {
      name: "Modern",
      slug: "modern",
      url: modern.url,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.agent_card.supportedInterfaces[0]).toMatchObject({ protocolVersion: "1.0" });
    const old = await call(gateway, key, "POST", "/v2/agent-integrations", {
      name: "Old",
      slug: "old",
      url: legacy.url,
    });
    expect(old.status, old.text).toBe(201);
    expect(old.body.agent_card.protocolVersion).toBe("0.3.0");
  });

  it("refuses a card with no endpoint, or an interface without url or binding (422)", async () => {
    const preview = async (card: Record<string, unknown>) => {
      const agent = await startEchoAgent({ cardOverride: card });
      try {
        return await call(gateway, key, "POST", "/v2/agent-integrations/fetch-agent-card", { url: agent.url });
      } finally {
        await agent.close();
      }
    };
    const none = await preview({ name: "No endpoint" });
    expect(none.status).toBe(422);
    expect(none.body.error.message).toContain("no endpoint");
    const noBinding = await preview({ name: "Half", supportedInterfaces: [{ url: "http://127.0.0.1:1/a2a" }] });
    expect(noBinding.status).toBe(422);
    expect(noBinding.body.error.message).toContain("protocolBinding");
  });
});

describe.each([
  { slug: "modern", agent: () => modern, wire: { version: "1.0", send: "SendMessage", cancel: "CancelTask" } },
  { slug: "old", agent: () => legacy, wire: { version: "0.3", send: "message/send", cancel: "tasks/cancel" } },
])("the $slug agent through the gateway", ({ slug, agent, wire }) => {
  it("answers message/send and streams a task, calling the upstream in its card's version", async () => {
    const client = await clientFor(slug);
    const before = agent().requests.length;
    const answer = (await client.sendMessage(userMessage("hello"))) as any;
    expect(textOf(answer.parts)).toBe("echo: hello");
    const events: any[] = [];
    for await (const event of client.sendMessageStream(userMessage("task streamed"))) events.push(event);
    expect(events[0].payload.$case).toBe("task");
    expect(events.at(-1).payload.value.status.state).toBe(3); // TASK_STATE_COMPLETED
    const calls = upstreamCalls(agent(), before);
    expect(calls[0]).toMatchObject({ path: "/a2a", version: wire.version, method: wire.send });
    expect(calls.every((entry) => entry.version === wire.version)).toBe(true);
  });

  it("cancels a running task (tasks/cancel), from the 1.0 client and the 0.3 transport alike", async () => {
    const client = await clientFor(slug);
    const started = (await client.sendMessage({
      ...userMessage("slow job"),
      configuration: { returnImmediately: true, acceptedOutputModes: [], historyLength: undefined } as never,
    })) as any;
    const taskId = started.id as string;
    expect(started.status.state).toBe(2); // TASK_STATE_WORKING
    const before = agent().requests.length;
    const cancelled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined } as never);
    expect(cancelled.status?.state).toBe(5); // TASK_STATE_CANCELED
    expect(upstreamCalls(agent(), before)[0]).toMatchObject({ version: wire.version, method: wire.cancel });
    expect((await client.getTask({ tenant: "", id: taskId, historyLength: undefined })).status?.state).toBe(5);

    const old = new LegacyJsonRpcTransport({ endpoint: `${gateway.url}/v1/agents/${slug}`, fetchImpl: withKey(key) });
    const second = (await old.sendMessage({
      ...userMessage("slow again"),
      configuration: { returnImmediately: true, acceptedOutputModes: [], historyLength: undefined } as never,
    })) as any;
    const stopped = await old.cancelTask({ tenant: "", id: second.id, metadata: undefined } as never);
    expect(stopped.status?.state).toBe(5);
  });
});

describe("an agent served by the SDK's own handlers, over HTTP+JSON", () => {
  it("is registered from its 1.0 card and called through its HTTP+JSON binding: send, stream, cancel", async () => {
    const rest = await startSdkAgent(["HTTP+JSON"]);
    try {
      const created = await call(gateway, key, "POST", "/v2/agent-integrations", {
        name: "Rest",
        slug: "rest",
        url: rest.url,
      });
      expect(created.status, created.text).toBe(201);
      const client = await clientFor("rest");
      expect(textOf(((await client.sendMessage(userMessage("over rest"))) as any).parts)).toBe("echo: over rest");
      const events: any[] = [];
      for await (const event of client.sendMessageStream(userMessage("task rest"))) events.push(event);
      expect(events.at(-1).payload.value.status.state).toBe(3);
      const started = (await client.sendMessage({
        ...userMessage("slow rest"),
        configuration: { returnImmediately: true, acceptedOutputModes: [], historyLength: undefined } as never,
      })) as any;
      expect(
        (await client.cancelTask({ tenant: "", id: started.id, metadata: undefined } as never)).status?.state,
      ).toBe(5);
      const posted = rest.requests.filter((request) => request.method === "POST");
      expect(posted.length).toBeGreaterThanOrEqual(4);
      // Every call went to the REST binding's paths, in A2A 1.0.
      expect(posted.every((request) => request.path.startsWith("/rest/") && request.version === "1.0")).toBe(true);
      expect(posted.map((request) => request.path)).toContain("/rest/message:send");
    } finally {
      await rest.close();
    }
  });
});

describe("version negotiation and the registered card", () => {
  it("answers VersionNotSupported for an A2A-Version it does not speak", async () => {
    const response = await fetch(`${gateway.url}/v1/agents/modern`, {
      method: "POST",
      headers: { "x-gateway-api-key": key, "content-type": "application/json", "a2a-version": "2.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "SendMessage", params: {} }),
    });
    const body = await response.json();
    expect(body.id).toBe(9);
    expect(body.error.code).toBe(-32009);
    expect(body.error.message).toContain("1.0, 0.3");
  });

  it("keeps calling the registered card's endpoint when the agent self-reports another", async () => {
    modern.serveCard({
      ...modern.card,
      supportedInterfaces: [{ ...(modern.card.supportedInterfaces as any[])[0], url: `${modern.url}/moved` }],
    });
    const before = modern.requests.length;
    const client = await clientFor("modern");
    expect(textOf(((await client.sendMessage(userMessage("still here"))) as any).parts)).toBe("echo: still here");
    const seen = modern.requests.slice(before);
    expect(seen.map((request) => request.path)).toEqual(["/a2a"]);
  });

  it("logs each call with its method, billed to the caller's key", async () => {
    const logs = await call(gateway, key, "GET", "/v1/logs?limit=100");
    const agentLogs = logs.body.data.filter((entry: any) => entry.provider === "a2a");
    const methods = new Set(agentLogs.map((entry: any) => entry.metadata?.a2a_method));
    for (const method of ["SendMessage", "SendStreamingMessage", "CancelTask", "message/send", "tasks/cancel"])
      expect(methods).toContain(method);
    expect([...new Set(agentLogs.map((entry: any) => entry.requestedModel))]).toEqual(
      expect.arrayContaining(["modern", "old", "rest"]),
    );
  });
});
