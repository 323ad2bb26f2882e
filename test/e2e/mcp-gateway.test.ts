import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { subjectFromApiKey } from "../../core/features/mcp/oauth/grant-subject.ts";
import { issueTokens } from "../../core/features/mcp/oauth/tokens.ts";
import type { McpServer } from "../../core/features/mcp/records.ts";
import { call, createKey, seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.ts";
import { seedMcpServer } from "../helpers/mcp-records.ts";

/**
 * The MCP gateway end to end: the MCP SDK's own client (streamable HTTP) against the gateway, the gateway
 * against a real MCP server built with the SDK that requires its own credential header.
 */

const UPSTREAM_SECRET = "upstream-secret-4e1b";
let gateway: TestGateway;
let upstream: McpUpstream;
let server: McpServer;
let memberKey: string;
let deniedKey: string;
let otherWorkspaceKey: string;
let otherOrganisationKey: string;

beforeAll(async () => {
  upstream = await startMcpUpstream({ requiredHeaders: { "x-upstream-key": UPSTREAM_SECRET } });
  gateway = await startTestGateway();
  const wsA = await seedWorkspace(gateway, "MCP A");
  const wsB = await seedWorkspace(gateway, "MCP B");
  const member = await seedUser(gateway, "mcp-member@example.com");
  const denied = await seedUser(gateway, "mcp-denied@example.com");
  await seedMember(gateway, wsA.id, member.id, "member");
  await seedMember(gateway, wsA.id, denied.id, "member");
  const key = (workspaceId: string, userId?: string) =>
    createKey(gateway, gateway.adminKey, "workspace", userId ? "user" : "service", {
      name: "mcp",
      workspace_id: workspaceId,
      ...(userId ? { user_id: userId } : {}),
      scopes: ["*"],
    }).then((created) => created.key);
  memberKey = await key(wsA.id, member.id);
  deniedKey = await key(wsA.id, denied.id);
  otherWorkspaceKey = await key(wsB.id);
  otherOrganisationKey = (
    await createApiKey(gateway.gateway.services.stores.records, {
      organisationId: "org_other",
      name: "other organisation admin",
      keyType: "organisation",
      keySubType: "service",
      scopes: ["*"],
    })
  ).secret;
  ({ server } = await seedMcpServer(gateway, {
    url: upstream.url,
    workspaceId: wsA.id,
    headers: { "X-Upstream-Key": UPSTREAM_SECRET },
    disabled: ["secret_admin_tool"],
    server: { user_access: [{ user_id: denied.id, enabled: false }] },
  }));
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

async function connect(key: string, serverRef = server.slug, traceId?: string): Promise<Client> {
  const client = new Client({ name: "e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/${serverRef}`), {
    requestInit: {
      headers: {
        "x-gateway-api-key": key,
        ...(traceId ? { "x-gateway-trace-id": traceId, "x-gateway-metadata": '{"team":"mcp-e2e"}' } : {}),
      },
    },
  });
  await client.connect(transport);
  return client;
}

/** The trace's logs once `ready` holds for them (logs are written after the answer). */
async function logsOf(traceId: string, ready: (logs: any[]) => boolean = (logs) => logs.length > 0) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const answer = await call(gateway, gateway.adminKey, "GET", `/v1/logs?trace_id=${traceId}&limit=100`);
    if (ready(answer.body.data)) return answer.body.data as any[];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return [];
}

describe("MCP gateway endpoint", () => {
  it("lists the allowed tools, calls echo and add, and refuses the hidden tool without reaching the upstream", async () => {
    const client = await connect(memberKey);
    expect(client.getServerVersion()).toMatchObject({ name: "test-upstream", version: "1.2.3" });
    expect(client.getInstructions()).toBe("A test server.");
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["add", "echo"]);

    const echoed = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(echoed.content).toEqual([{ type: "text", text: "echo: hi" }]);
    const added = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    expect(added.structuredContent).toEqual({ sum: 5 });

    const before = upstream.toolCalls.length;
    const hidden = await client.callTool({ name: "secret_admin_tool", arguments: {} }).catch((error) => error);
    expect(hidden).toBeInstanceOf(Error);
    expect(String(hidden.message)).toContain("not available");
    expect(upstream.toolCalls.slice(before).map((call) => call.name)).not.toContain("secret_admin_tool");
    expect(upstream.toolCalls.map((call) => call.name)).not.toContain("secret_admin_tool");
    await client.close();
  });

  it("proxies prompts, resources and resource templates", async () => {
    const client = await connect(memberKey);
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(["greet"]);
    const prompt = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
    expect(prompt.messages[0]!.content).toEqual({ type: "text", text: "Hello Ada" });
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toEqual(["memo://readme"]);
    expect((await client.readResource({ uri: "memo://readme" })).contents[0]).toMatchObject({ text: "The readme." });
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((template) => template.uriTemplate)).toEqual(["memo://notes/{id}"]);
    expect((await client.readResource({ uri: "memo://notes/7" })).contents[0]).toMatchObject({ text: "Note 7" });
    await expect(client.readResource({ uri: "file:///etc/passwd" })).rejects.toThrow(/not available/);
    await client.close();
  });

  it("refuses a user the server denies, and another workspace's key as if the server did not exist", async () => {
    const denied = await connect(deniedKey).catch((error) => error);
    expect(denied).toBeInstanceOf(Error);
    expect(String(denied.message)).toMatch(/403|access/);

    const foreign = await fetch(`${gateway.url}/mcp/${server.slug}`, mcpPost(otherWorkspaceKey));
    expect(foreign.status).toBe(404);
    const unknown = await fetch(`${gateway.url}/mcp/server-nope`, mcpPost(otherWorkspaceKey));
    expect(unknown.status).toBe(404);
    expect((await foreign.json()).error.code).toBe((await unknown.json()).error.code);
    const byId = await fetch(`${gateway.url}/mcp/${server.id}`, mcpPost(otherWorkspaceKey));
    expect(byId.status).toBe(404);
  });

  it("another organisation's admin key can neither use nor list the server", async () => {
    for (const ref of [server.slug, server.id]) {
      const answer = await fetch(`${gateway.url}/mcp/${ref}`, mcpPost(otherOrganisationKey));
      expect(answer.status).toBe(404);
    }
    expect((await call(gateway, otherOrganisationKey, "GET", "/v0.1/servers")).body.servers).toEqual([]);
    const principal = await gateway.gateway.services.apiKeys.authenticate(otherOrganisationKey);
    await expect(gateway.gateway.services.mcpTools!.listTools(principal, server.id)).rejects.toMatchObject({
      status: 404,
    });
  });

  it("answers 401 with the protected-resource challenge without credentials", async () => {
    const answer = await fetch(`${gateway.url}/mcp/${server.slug}`, mcpPost(undefined));
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${gateway.url}/.well-known/oauth-protected-resource/mcp/${server.slug}"`,
    );
    const wrong = await fetch(`${gateway.url}/mcp/${server.slug}`, mcpPost("not-a-key"));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toContain("resource_metadata=");
  });

  it("accepts the gateway key as a bearer token", async () => {
    const client = new Client({ name: "bearer", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/${server.slug}`), {
        requestInit: { headers: { authorization: `Bearer ${memberKey}` } },
      }),
    );
    expect((await client.listTools()).tools).toHaveLength(2);
    await client.close();
  });

  it("accepts an access token of the gateway's OAuth server granted for this server, and no other", async () => {
    const services = gateway.gateway.services;
    const grant = async (resource: string) =>
      issueTokens(
        services.stores.records,
        {
          clientId: "client-e2e",
          scope: "mcp",
          resource,
          subject: (await subjectFromApiKey(services, memberKey)).subject,
          familyId: `family-${Math.random()}`,
        },
        { accessSeconds: 300, refreshSeconds: 600, refresh: false },
      );
    const mine = await grant(`${gateway.url}/mcp/${server.slug}`);
    const client = new Client({ name: "oauth", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/${server.slug}`), {
        requestInit: { headers: { authorization: `Bearer ${mine.access_token}` } },
      }),
    );
    expect((await client.callTool({ name: "echo", arguments: { text: "oauth" } })).content).toEqual([
      { type: "text", text: "echo: oauth" },
    ]);
    await client.close();
    // The token never goes upstream either.
    expect(JSON.stringify(upstream.requestHeaders)).not.toContain(mine.access_token);

    const elsewhere = await grant(`${gateway.url}/mcp/some-other-server`);
    const init = mcpPost(undefined);
    const refused = await fetch(`${gateway.url}/mcp/${server.slug}`, {
      ...init,
      headers: { ...init.headers, authorization: `Bearer ${elsewhere.access_token}` },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("keeps credentials apart: the upstream's never reach the client or the logs, the caller's never go upstream", async () => {
    const traceId = `mcp-secrets-${Date.now()}`;
    const seen = upstream.requestHeaders.length;
    const raw = await fetch(`${gateway.url}/mcp/${server.slug}`, {
      ...mcpPost(memberKey, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "x" } },
      }),
      headers: { ...mcpPost(memberKey).headers, "x-gateway-trace-id": traceId, "mcp-protocol-version": "2025-06-18" },
    });
    const text = await raw.text();
    expect(raw.status).toBe(200);
    expect(text).toContain("echo: x");
    expect(text).not.toContain(UPSTREAM_SECRET);
    expect([...raw.headers.values()].join(" ")).not.toContain(UPSTREAM_SECRET);
    const sent = upstream.requestHeaders.slice(seen);
    expect(sent.length).toBeGreaterThan(0);
    for (const headers of sent) {
      expect(headers["x-upstream-key"]).toBe(UPSTREAM_SECRET);
      expect(JSON.stringify(headers)).not.toContain(memberKey);
      expect(headers["x-gateway-api-key"]).toBeUndefined();
    }
    const logs = await logsOf(traceId);
    expect(logs).toHaveLength(1);
    expect(JSON.stringify(logs)).not.toContain(UPSTREAM_SECRET);
    expect(JSON.stringify(logs)).not.toContain(memberKey);
  });

  it("logs every request with method, tool, hashed arguments, latency and result size", async () => {
    const traceId = `mcp-logs-${Date.now()}`;
    const client = await connect(memberKey, server.slug, traceId);
    await client.callTool({ name: "echo", arguments: { text: "logged" } });
    await client.close();
    const logs = await logsOf(traceId, (found) => found.some((log) => log.mcp?.method === "tools/call"));
    const callLog = logs.find((log) => log.mcp?.method === "tools/call");
    expect(callLog).toMatchObject({
      provider: "mcp",
      requestedModel: server.slug,
      status: 200,
      mcp: { serverId: server.id, serverSlug: server.slug, name: "echo", toolError: false },
    });
    expect(callLog.mcp.argumentsHash).toMatch(/^[0-9a-f]{64}$/);
    expect(callLog.metadata).toEqual({ team: "mcp-e2e" });
    expect(callLog.mcp.arguments).toBeUndefined();
    expect(JSON.stringify(callLog)).not.toContain("logged");
    expect(callLog.mcp.resultBytes).toBeGreaterThan(0);
    expect(callLog.latencyMs).toBeGreaterThan(0);
    expect(logs.map((log) => log.mcp?.method)).toEqual(expect.arrayContaining(["initialize", "tools/call"]));
    // The other workspace does not see them.
    const foreign = await call(gateway, otherWorkspaceKey, "GET", `/v1/logs?trace_id=${traceId}`);
    expect(foreign.body.data).toEqual([]);
    const otherOrganisation = await call(gateway, otherOrganisationKey, "GET", `/v1/logs?trace_id=${traceId}`);
    expect(otherOrganisation.body.data).toEqual([]);
  });

  it("applies rate-limit policies to tool calls: the third call is refused with 429", async () => {
    const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "limited",
      workspace_id: server.workspaceId,
      scopes: ["*"],
    });
    const policy = await call(gateway, gateway.adminKey, "POST", "/v2/policies/rate-limits", {
      name: "Two MCP calls",
      conditions: [
        { key: "api_key", value: key.id },
        { key: "provider", value: "mcp" },
      ],
      group_by: [{ key: "api_key" }],
      type: "requests",
      unit: "rpd",
      value: 2,
    });
    expect(policy.status).toBe(201);
    const client = await connect(key.key);
    // Listing is not a tool call: it does not count.
    await client.listTools();
    await client.callTool({ name: "echo", arguments: { text: "1" } });
    await client.callTool({ name: "echo", arguments: { text: "2" } });
    const before = upstream.toolCalls.length;
    const third = await client.callTool({ name: "echo", arguments: { text: "3" } }).catch((error) => error);
    expect(third).toBeInstanceOf(Error);
    expect(third.code).toBe(429);
    expect(String(third.message)).toContain("Two MCP calls");
    expect(upstream.toolCalls.length).toBe(before);
    await client.close();
    await call(gateway, gateway.adminKey, "DELETE", `/v2/policies/rate-limits/${policy.body.id}`);
  });

  it("services.mcpTools lists and calls tools with the same checks", async () => {
    const host = gateway.gateway.services.mcpTools!;
    const principal = await gateway.gateway.services.apiKeys.authenticate(memberKey);
    const tools = await host.listTools(principal, server.slug);
    expect(tools.map((tool) => tool.name).sort()).toEqual(["add", "echo"]);
    const result = await host.callTool(
      principal,
      server.slug,
      { name: "add", arguments: { a: 1, b: 1 } },
      {
        traceId: `mcp-host-${Date.now()}`,
      },
    );
    expect(result.structuredContent).toEqual({ sum: 2 });
    // A tool loop's next call reuses the connected upstream client: no new initialize upstream.
    const before = upstream.requestHeaders.length;
    await host.callTool(principal, server.slug, { name: "echo", arguments: { text: "again" } }, { traceId: "t2" });
    expect(upstream.requestHeaders.length - before).toBe(1);
    await expect(
      host.callTool(principal, server.slug, { name: "secret_admin_tool", arguments: {} }, { traceId: "t" }),
    ).rejects.toMatchObject({ status: 404 });
    const denied = await gateway.gateway.services.apiKeys.authenticate(deniedKey);
    await expect(host.listTools(denied, server.slug)).rejects.toMatchObject({ status: 403 });
    const foreign = await gateway.gateway.services.apiKeys.authenticate(otherWorkspaceKey);
    await expect(host.listTools(foreign, server.slug)).rejects.toMatchObject({ status: 404 });
  });

  it("GET /v0.1/servers lists the servers the caller may use, in the registry's shape", async () => {
    const mine = await call(gateway, memberKey, "GET", "/v0.1/servers?limit=10");
    expect(mine.status).toBe(200);
    const entry = mine.body.servers.find((item: any) => item._meta["ai-gateway/mcp-server"].id === server.id);
    expect(entry.server).toMatchObject({
      name: `ai-gateway/${server.slug}`,
      remotes: [{ type: "streamable-http", url: `${gateway.url}/mcp/${server.slug}` }],
    });
    const capabilities = entry._meta["ai-gateway/mcp-server"].capabilities;
    expect(capabilities.tools.map((tool: any) => tool.name).sort()).toEqual(["add", "echo"]);
    expect(mine.body.metadata.count).toBe(mine.body.servers.length);
    expect((await call(gateway, deniedKey, "GET", "/v0.1/servers")).body.servers).toEqual([]);
    expect((await call(gateway, otherWorkspaceKey, "GET", "/v0.1/servers")).body.servers).toEqual([]);
    expect((await call(gateway, undefined, "GET", "/v0.1/servers")).status).toBe(401);
  });

  it("refuses a browser request from a foreign origin (DNS rebinding)", async () => {
    const init = mcpPost(memberKey);
    const answer = await fetch(`${gateway.url}/mcp/${server.slug}`, {
      ...init,
      headers: { ...init.headers, origin: "http://evil.example" },
    });
    expect(answer.status).toBe(403);
  });
});

function mcpPost(key: string | undefined, message?: unknown) {
  return {
    method: "POST",
    headers: {
      ...(key ? { "x-gateway-api-key": key } : {}),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    } as Record<string, string>,
    body: JSON.stringify(
      message ?? {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      },
    ),
  };
}
