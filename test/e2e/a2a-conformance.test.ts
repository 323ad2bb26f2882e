import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf, userMessage, withKey } from "../helpers/a2a-client.ts";
import { type EchoAgent, startEchoAgent } from "../helpers/a2a-echo-agent.ts";
import { recordConformance } from "../helpers/conformance-page.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/**
 * The A2A checks of docs/conformance.md: for each wire version the gateway's agent endpoint speaks (1.0 and
 * 0.3), the SDK's client of that version drives an agent with a 1.0 card and one with a 0.3 card through the
 * gateway, each operation a named check: the gateway's card, message/send, message/stream (SSE), tasks/get,
 * tasks/cancel, an unknown task's error, and the version the upstream was called in. Every check must pass;
 * the counts are recorded on the page.
 */

const SUITE = "A2A agent endpoint (`@a2a-js/sdk` client)";
let gateway: TestGateway;
let agents: { modern: EchoAgent; legacy: EchoAgent };
let key: string;

/** The operations one client version can perform through the gateway. */
interface Driver {
  send(text: string): Promise<{ text: string }>;
  stream(text: string): Promise<{ kinds: string[]; finalState: number }>;
  startSlow(): Promise<string>;
  get(taskId: string): Promise<number | undefined>;
  cancel(taskId: string): Promise<number | undefined>;
}

async function driverFor(version: "1.0" | "0.3", slug: string): Promise<Driver> {
  const fetchImpl = withKey(key);
  const background = { returnImmediately: true, acceptedOutputModes: [], historyLength: undefined } as never;
  if (version === "1.0") {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    );
    const client = await factory.createFromUrl(`${gateway.url}/v1/agents/${slug}/.well-known/agent-card.json`, "");
    return {
      send: async (text) => ({ text: textOf(((await client.sendMessage(userMessage(text))) as any).parts) }),
      stream: async (text) => collect(client.sendMessageStream(userMessage(text))),
      startSlow: async () =>
        ((await client.sendMessage({ ...userMessage("slow"), configuration: background })) as any).id,
      get: async (id) => (await client.getTask({ tenant: "", id, historyLength: undefined })).status?.state,
      cancel: async (id) => (await client.cancelTask({ tenant: "", id, metadata: undefined } as never)).status?.state,
    };
  }
  const legacy = new LegacyJsonRpcTransport({ endpoint: `${gateway.url}/v1/agents/${slug}`, fetchImpl });
  return {
    send: async (text) => ({ text: textOf(((await legacy.sendMessage(userMessage(text))) as any).parts) }),
    stream: async (text) => collect(legacy.sendMessageStream(userMessage(text))),
    startSlow: async () =>
      ((await legacy.sendMessage({ ...userMessage("slow"), configuration: background })) as any).id,
    get: async (id) => (await legacy.getTask({ tenant: "", id, historyLength: undefined })).status?.state,
    cancel: async (id) => (await legacy.cancelTask({ tenant: "", id, metadata: undefined } as never)).status?.state,
  };
}

async function collect(events: AsyncIterable<any>) {
  const kinds: string[] = [];
  let finalState = -1;
  for await (const event of events) {
    kinds.push(event.payload?.$case);
    finalState = event.payload?.value?.status?.state ?? finalState;
  }
  return { kinds, finalState };
}

/** The checks, by name: each throws when the gateway does not behave. */
function checks(version: "1.0" | "0.3", agentName: "modern" | "legacy"): Array<[string, () => Promise<void>]> {
  const agent = () => agents[agentName];
  const upstreamVersion = agentName === "modern" ? "1.0" : "0.3";
  const drive = () => driverFor(version, agentName);
  return [
    [
      "card: the gateway's endpoint for both versions, no upstream address",
      async () => {
        const card = await fetch(`${gateway.url}/v1/agents/${agentName}/.well-known/agent-card.json`, {
          headers: { "x-gateway-api-key": key },
        }).then((response) => response.json());
        const versions = card.supportedInterfaces.map((entry: any) => entry.protocolVersion).sort();
        expect(versions).toEqual(["0.3", "1.0"]);
        expect(JSON.stringify(card)).not.toContain(agent().url);
      },
    ],
    ["message/send", async () => expect((await (await drive()).send("hi")).text).toBe("echo: hi")],
    [
      "message/stream (SSE): task, updates, completed",
      async () => {
        const streamed = await (await drive()).stream("task streamed");
        expect(streamed.kinds[0]).toBe("task");
        expect(streamed.finalState).toBe(3);
      },
    ],
    [
      "tasks/get and tasks/cancel of a running task",
      async () => {
        const driver = await drive();
        const taskId = await driver.startSlow();
        expect(await driver.get(taskId)).toBe(2);
        expect(await driver.cancel(taskId)).toBe(5);
        expect(await driver.get(taskId)).toBe(5);
      },
    ],
    [
      "an unknown task answers TaskNotFound",
      async () => {
        const method = version === "1.0" ? "GetTask" : "tasks/get";
        const answer = await call(gateway, key, "POST", `/v1/agents/${agentName}`, {
          jsonrpc: "2.0",
          id: 1,
          method,
          params: { id: "no-such-task" },
        });
        expect(answer.body.error.code).toBe(-32001);
      },
    ],
    [
      `the upstream is called in its card's version (${upstreamVersion})`,
      async () => {
        const before = agent().requests.length;
        await (await drive()).send("version");
        const posted = agent()
          .requests.slice(before)
          .filter((request) => request.method === "POST");
        expect(posted.map((request) => request.headers["a2a-version"])).toEqual([upstreamVersion]);
      },
    ],
  ];
}

beforeAll(async () => {
  gateway = await startTestGateway();
  agents = { modern: await startEchoAgent({ cardShape: "1.0" }), legacy: await startEchoAgent({ cardShape: "0.3" }) };
  const workspace = (await seedWorkspace(gateway, "A2A conformance")).id;
  key = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "a2a-conformance",
      workspace_id: workspace,
      scopes: ["agent_integrations.create", "agents.invoke"],
    })
  ).key;
  for (const name of ["modern", "legacy"] as const) {
    const created = await call(gateway, key, "POST", "/v2/agent-integrations", {
      name,
      slug: name,
      url: agents[name].url,
    });
    expect(created.status, created.text).toBe(201);
  }
});

afterAll(async () => {
  await gateway?.close();
  await agents?.modern.close();
  await agents?.legacy.close();
});

describe.each(["1.0", "0.3"] as const)("A2A %s clients through the gateway", (version) => {
  it("passes every check against a 1.0-card agent and a 0.3-card agent", { timeout: 60_000 }, async () => {
    const failures: string[] = [];
    let passed = 0;
    for (const agentName of ["modern", "legacy"] as const) {
      for (const [name, run] of checks(version, agentName)) {
        try {
          await run();
          passed++;
        } catch (error) {
          failures.push(`${agentName} card: ${name}: ${(error as Error).message}`);
        }
      }
    }
    expect(failures).toEqual([]);
    const measured = {
      version: `@a2a-js/sdk ${sdkVersion()}`,
      passed,
      failed: failures.length,
      expectedFailures: 0,
    };
    const committed = recordConformance({ suite: SUITE, requirements: `A2A ${version}`, ...measured });
    expect(committed, "docs/conformance.md was regenerated with these counts: commit it").toEqual(measured);
  });
});

function sdkVersion(): string {
  const manifest = join(process.cwd(), "node_modules", "@a2a-js", "sdk", "package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}
