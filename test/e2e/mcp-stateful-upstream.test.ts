import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverUpstream } from "../../core/features/mcp/integrations/discovery.ts";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { seedMcpServer } from "../helpers/mcp-records.ts";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.ts";

/**
 * An upstream MCP server that keeps sessions (most servers do): the gateway's endpoint is stateless and opens an
 * upstream session per request, so it must end each one (HTTP DELETE) or the upstream would hold one per call.
 */

let gateway: TestGateway;
let upstream: McpUpstream;
let serverUrl: string;
let key: string;

beforeAll(async () => {
  upstream = await startMcpUpstream({ stateful: true });
  gateway = await startTestGateway();
  const workspace = await seedWorkspace(gateway, "MCP stateful upstream");
  key = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "stateful",
      workspace_id: workspace.id,
      scopes: ["*"],
    })
  ).key;
  const { server } = await seedMcpServer(gateway, { url: upstream.url, workspaceId: workspace.id });
  serverUrl = `${gateway.url}/mcp/${server.slug}`;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe("a stateful upstream MCP server", () => {
  it("serves listings and tool calls through the gateway, and is left with no open session", async () => {
    expect(upstream.openSessions()).toBe(0); // the sync made on seeding ended its session too
    const client = new Client({ name: "stateful-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(serverUrl), { requestInit: { headers: { "x-gateway-api-key": key } } }),
    );
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("echo");
    for (let i = 0; i < 3; i++) {
      const result = await client.callTool({ name: "echo", arguments: { text: `hi ${i}` } });
      expect(result.content).toEqual([{ type: "text", text: `echo: hi ${i}` }]);
    }
    await client.close();
    await expect.poll(() => upstream.openSessions(), { timeout: 5_000 }).toBe(0);
  });

  it("discovery ends the session it opened", async () => {
    const services = gateway.gateway.services;
    const draft = {
      id: "mcpi_draft",
      organisationId: "org",
      slug: "draft",
      name: "Draft",
      url: upstream.url,
      transport: "http" as const,
      auth_type: "none" as const,
      configurations: {},
      capabilities: [],
      server_info: {},
      workspaces: [],
      global_workspace_access: true,
      version: 1,
      createdAt: 0,
      updatedAt: 0,
    };
    const snapshot = await discoverUpstream(services, draft);
    expect(snapshot.capabilities.length).toBeGreaterThan(3);
    expect(upstream.openSessions()).toBe(0);
  });
});
