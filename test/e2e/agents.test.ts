import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf, userMessage, withKey } from "../helpers/a2a-client.ts";
import { type EchoAgent, startEchoAgent } from "../helpers/a2a-echo-agent.ts";
import { type CryptoKey, SignJWT, exportJWK, generateKeyPair } from "jose";
import { call, createKey, seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, startMockServer } from "../helpers/mock-server.ts";

/**
 * The agents gateway end to end: a real A2A agent (the SDK's server pieces on node:http) registered as an agent
 * integration, and the A2A SDK's own client pointed at the gateway's card URL: card, message/send, message/stream,
 * tasks/get (A2A 1.0 and 0.3 wire names), the caller's scope and workspace, logs, rate limits, and
 * fetch-agent-card's refusals (private address, 1.1 MB card, card without `name`).
 */

let gateway: TestGateway;
let agent: EchoAgent;
let workspaceA: string;
let keyA: string;
let slug: string;

/** A fetch that sends a bearer JWT instead (spec 5.4: `agents.invoke` may be granted to JWTs). */
const withJwt =
  (jwt: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${jwt}`);
    return fetch(input, { ...init, headers });
  };

const JWT_ISSUER = "https://idp.agents.test";
const JWT_AUDIENCE = "ai-gateway";
let jwtKey: CryptoKey;

const jwtFor = (claims: Record<string, unknown>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: "agents-test" })
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(jwtKey);

async function clientFor(key: string, agentRef = slug, fetchImpl: typeof fetch = withKey(key)): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new (await import("@a2a-js/sdk/client")).DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(`${gateway.url}/v1/agents/${agentRef}/.well-known/agent-card.json`, "");
}

beforeAll(async () => {
  const pair = await generateKeyPair("RS256", { extractable: true });
  jwtKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: "agents-test", alg: "RS256", use: "sig" };
  gateway = await startTestGateway({
    GATEWAY_JWT_JWKS: JSON.stringify({ keys: [jwk] }),
    GATEWAY_JWT_ISSUER: JWT_ISSUER,
    GATEWAY_JWT_AUDIENCE: JWT_AUDIENCE,
  });
  agent = await startEchoAgent();
  workspaceA = (await seedWorkspace(gateway, "Agents A")).id;
  keyA = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "agents-a",
      workspace_id: workspaceA,
      scopes: [
        "agent_integrations.create",
        "agent_integrations.read",
        "agent_integrations.list",
        "agents.invoke",
        "logs.list",
        "logs.view",
      ],
    })
  ).key;
  const created = await call(gateway, keyA, "POST", "/v2/agent-integrations", {
    name: "Echo",
    slug: "echo",
    url: agent.url,
    auth_type: "headers",
    headers: { "x-upstream-key": "upstream-secret-value-123" },
  });
  expect(created.status, created.text).toBe(201);
  slug = created.body.slug;
});

afterAll(async () => {
  await gateway?.close();
  await agent?.close();
});

describe("agent integrations", () => {
  it("stores the fetched card, shows the upstream headers masked, and audits the creation", async () => {
    const got = await call(gateway, keyA, "GET", `/v2/agent-integrations/${slug}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      object: "agent_integration",
      slug: "echo",
      workspace_id: workspaceA,
      card_url: `${agent.url}/.well-known/agent-card.json`,
      auth_type: "headers",
      invoke_path: "/v1/agents/echo",
    });
    expect(got.body.agent_card.name).toBe("Echo agent");
    expect(got.body.headers["x-upstream-key"]).not.toContain("upstream-secret-value");
    expect(JSON.stringify(got.body)).not.toContain("upstream-secret-value-123");
    const listed = await call(gateway, keyA, "GET", "/v2/agent-integrations");
    expect(listed.body.data.map((entry: any) => entry.id)).toContain(got.body.id);
    const audit = await call(gateway, gateway.adminKey, "GET", "/v1/audit-logs?limit=50");
    if (audit.status === 200) {
      const text = JSON.stringify(audit.body);
      expect(text).toContain("agent_integration");
      expect(text).not.toContain("upstream-secret-value-123");
    }
  });
});

describe("invocation through the A2A SDK client", () => {
  it("serves the card with the gateway's endpoint and security schemes", async () => {
    const response = await fetch(`${gateway.url}/v1/agents/echo/.well-known/agent-card.json`, {
      headers: { "x-gateway-api-key": keyA },
    });
    expect(response.status).toBe(200);
    const card = await response.json();
    expect(card.name).toBe("Echo agent");
    expect(card.url).toBe(`${gateway.url}/v1/agents/echo`);
    expect(card.supportedInterfaces.every((entry: any) => entry.url === card.url)).toBe(true);
    expect(card.securitySchemes.gatewayApiKey).toMatchObject({ type: "apiKey", name: "x-gateway-api-key" });
    expect(JSON.stringify(card)).not.toContain(agent.url);
  });

  it("message/send, message/stream and tasks/get (A2A 1.0)", async () => {
    const client = await clientFor(keyA);
    const before = agent.requests.length;
    const answer = (await client.sendMessage(userMessage("hello"))) as any;
    expect(textOf(answer.parts)).toBe("echo: hello");
    // Forwarded with the stored header, never the caller's key.
    const forwarded = agent.requests.slice(before).find((request) => request.path === "/a2a")!;
    expect(forwarded.headers["x-upstream-key"]).toBe("upstream-secret-value-123");
    expect(forwarded.headers["x-gateway-api-key"]).toBeUndefined();

    const events: any[] = [];
    for await (const event of client.sendMessageStream(userMessage("task please"))) events.push(event);
    const cases = events.map((event) => event.payload?.$case);
    expect(cases[0]).toBe("task");
    expect(cases).toContain("statusUpdate");
    const last = events.at(-1).payload.value;
    expect(last.status.state).toBe(3); // TASK_STATE_COMPLETED
    expect(textOf(last.status.message.parts)).toBe("echo: task please");

    const taskId = events[0].payload.value.id;
    const task = await client.getTask({ tenant: "", id: taskId, historyLength: undefined });
    expect(task.id).toBe(taskId);
    expect(task.status?.state).toBe(3);
  });

  it("speaks A2A 0.3 too (message/send, message/stream, tasks/get)", async () => {
    const legacy = new LegacyJsonRpcTransport({ endpoint: `${gateway.url}/v1/agents/echo`, fetchImpl: withKey(keyA) });
    const answer = (await legacy.sendMessage(userMessage("old"))) as any;
    expect(textOf(answer.parts)).toBe("echo: old");
    const events: any[] = [];
    for await (const event of legacy.sendMessageStream(userMessage("task old"))) events.push(event);
    expect(events.length).toBeGreaterThanOrEqual(3);
    const taskId = events[0].payload.value.id;
    expect((await legacy.getTask({ tenant: "", id: taskId, historyLength: undefined })).id).toBe(taskId);
    // The wire names are 0.3's.
    const raw = await call(gateway, keyA, "POST", "/v1/agents/echo", {
      jsonrpc: "2.0",
      id: 7,
      method: "tasks/get",
      params: { id: "no-such-task" },
    });
    expect(raw.status).toBe(200);
    expect(raw.body.error.code).toBe(-32001);
  });

  it("refuses a caller without agents.invoke (403) and another workspace or organisation (404)", async () => {
    const noScope = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "no-invoke",
      workspace_id: workspaceA,
      scopes: ["agent_integrations.read"],
    });
    const rpc = { jsonrpc: "2.0", id: 1, method: "message/send", params: {} };
    expect((await call(gateway, noScope.key, "POST", "/v1/agents/echo", rpc)).status).toBe(403);
    expect((await call(gateway, noScope.key, "GET", "/v1/agents/echo/.well-known/agent-card.json")).status).toBe(403);

    const other = await seedWorkspace(gateway, "Agents B");
    const keyB = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "agents-b",
      workspace_id: other.id,
      scopes: ["*"],
    });
    const foreign = await call(gateway, keyB.key, "POST", "/v1/agents/echo", rpc);
    const unknown = await call(gateway, keyB.key, "POST", "/v1/agents/no-such-agent", rpc);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe(unknown.body.error.code);
    expect((await call(gateway, keyB.key, "GET", "/v1/agents/echo/.well-known/agent-card.json")).status).toBe(404);
    expect((await call(gateway, keyB.key, "GET", `/v2/agent-integrations/${slug}`)).status).toBe(404);

    const otherOrg = await startTestGateway();
    try {
      expect((await call(otherOrg, otherOrg.adminKey, "POST", "/v1/agents/echo", rpc)).status).toBe(404);
    } finally {
      await otherOrg.close();
    }
  });

  it("accepts a JWT holding agents.invoke and refuses one without it", async () => {
    const user = await seedUser(gateway, `agent-user-${crypto.randomUUID()}@example.com`);
    await seedMember(gateway, workspaceA, user.id, "member");
    const granted = await jwtFor({ email: user.email, workspace_id: workspaceA, scope: "agents.invoke" });
    const client = await clientFor("", slug, withJwt(granted));
    const answer = (await client.sendMessage(userMessage("from a jwt"))) as any;
    expect(textOf(answer.parts)).toBe("echo: from a jwt");
    const forwarded = agent.requests.at(-1)!;
    expect(forwarded.headers.authorization).toBeUndefined();

    const withoutScope = await jwtFor({ email: user.email, workspace_id: workspaceA, scope: "logs.list" });
    const refused = await fetch(`${gateway.url}/v1/agents/${slug}`, {
      method: "POST",
      headers: { authorization: `Bearer ${withoutScope}`, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "t" } }),
    });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.message).toContain("agents.invoke");
  });

  it("writes one log per invocation (provider a2a, model = slug, method)", async () => {
    const traceId = `agents-log-${Date.now()}`;
    const answer = await call(
      gateway,
      keyA,
      "POST",
      "/v1/agents/echo",
      {
        jsonrpc: "2.0",
        id: 3,
        method: "message/send",
        params: {
          message: { kind: "message", messageId: "m-1", role: "user", parts: [{ kind: "text", text: "log me" }] },
        },
      },
      { "x-gateway-trace-id": traceId },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.result.parts[0].text).toBe("echo: log me");
    await expect
      .poll(async () => (await call(gateway, keyA, "GET", `/v1/logs?trace_id=${traceId}`)).body.data?.length ?? 0, {
        timeout: 5000,
      })
      .toBe(1);
    const [log] = (await call(gateway, keyA, "GET", `/v1/logs?trace_id=${traceId}`)).body.data;
    expect(log).toMatchObject({ provider: "a2a", status: 200, traceId });
    expect(log.requestedModel ?? log.model).toBe("echo");
    expect(log.metadata?.a2a_method).toBe("message/send");
    expect(typeof log.latencyMs).toBe("number");
  });

  it("applies rate-limit policies: the third call in the window answers 429", async () => {
    const limited = await startEchoAgent();
    try {
      const created = await call(gateway, keyA, "POST", "/v2/agent-integrations", {
        name: "Limited",
        slug: "limited",
        url: limited.url,
      });
      expect(created.status, created.text).toBe(201);
      const policy = await call(gateway, gateway.adminKey, "POST", "/v2/policies/rate-limits", {
        type: "requests",
        unit: "rpm",
        value: 2,
        conditions: [{ key: "model", value: "limited" }],
      });
      expect(policy.status, policy.text).toBe(201);
      const rpc = {
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: { message: { kind: "message", messageId: "m", role: "user", parts: [{ kind: "text", text: "x" }] } },
      };
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(gateway, keyA, "POST", "/v1/agents/limited", rpc)).status);
      expect(statuses.slice(0, 2)).toEqual([200, 200]);
      const refused = await call(gateway, keyA, "POST", "/v1/agents/limited", rpc);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ type: "rate_limit_error" });
      // The other agent is not limited.
      expect((await call(gateway, keyA, "POST", "/v1/agents/echo", rpc)).status).toBe(200);
      await call(gateway, gateway.adminKey, "DELETE", `/v2/policies/rate-limits/${policy.body.id}`);
    } finally {
      await limited.close();
    }
  });
});

describe("POST /v2/agent-integrations/fetch-agent-card", () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer((request, response) => {
      if (request.path.startsWith("/big")) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ name: "Big", url: "https://x.example", padding: "x".repeat(1.1 * 1024 * 1024) }));
      } else if (request.path.startsWith("/nameless")) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ url: "https://x.example" }));
      } else if (request.path === "/old/.well-known/agent.json") {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ name: "Old", url: "https://old.example/a2a" }));
      } else response.writeHead(404).end();
    });
  });
  afterAll(() => mock?.close());

  const fetchCard = (body: unknown, target = gateway) =>
    call(target, target.adminKey, "POST", "/v2/agent-integrations/fetch-agent-card", body);

  it("returns the card of a base URL, falling back to /.well-known/agent.json", async () => {
    const found = await fetchCard({ url: agent.url });
    expect(found.status).toBe(200);
    expect(found.body.agent_card.name).toBe("Echo agent");
    const old = await fetchCard({ url: `${mock.url}/old` });
    expect(old.status, old.text).toBe(200);
    expect(old.body).toMatchObject({ card_url: `${mock.url}/old/.well-known/agent.json`, agent_card: { name: "Old" } });
  });

  it("rejects a card over 1 MB and one without `name`", async () => {
    const big = await fetchCard({ url: `${mock.url}/big/card.json` });
    expect(big.status).toBe(422);
    expect(big.body.error.code).toBe("agent_card_too_large");
    const nameless = await fetchCard({ url: `${mock.url}/nameless/card.json` });
    expect(nameless.status).toBe(422);
    expect(nameless.body.error.message).toContain("`name`");
  });

  it("rejects private addresses, metadata hosts and unsafe schemes without TRUSTED_CUSTOM_HOSTS", async () => {
    const strict = await startTestGateway({ TRUSTED_CUSTOM_HOSTS: "" });
    try {
      for (const url of [
        agent.url,
        "http://169.254.169.254/latest",
        "http://metadata.google.internal/",
        "file:///etc/passwd",
      ]) {
        const refused = await fetchCard({ url }, strict);
        expect(refused.status, url).toBe(400);
        expect(refused.body.error.code).toBe("invalid_custom_host");
      }
      // Registering is refused alike.
      const created = await call(strict, strict.adminKey, "POST", "/v2/agent-integrations", {
        name: "x",
        url: agent.url,
      });
      expect(created.status).toBe(400);
    } finally {
      await strict.close();
    }
  });
});
