import { describe, expect, it } from "vitest";
import { ensureOrganisation } from "../../../core/control/organisation/bootstrap.ts";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mcpIntegrationStore, mcpServerStore } from "../../../core/features/mcp/records.ts";
import { startMcpUpstream } from "../../helpers/mcp-upstream.ts";
import { startEchoAgent } from "../../helpers/a2a-echo-agent.ts";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { codeOf, memoryOAuthProvider, signInWithKeyAndAllow } from "../../helpers/oauth-browser.ts";
import type { SuiteContext } from "./context.ts";

/** The end-to-end suite (index.ts): MCP and agents. */
export function describeMcpAgents(suite: SuiteContext): void {
  const { api } = suite;
  describe("MCP and agents", () => {
    it("an MCP tool call through the MCP endpoint (the MCP SDK loads on first use), logged", async () => {
      const upstream = await startMcpUpstream();
      try {
        // Seeded in the target's own stores (the MCP admin API is another family).
        const slug = await suite.gateway.withStores(async (stores) => {
          const { organisationId, defaultWorkspaceId } = await ensureOrganisation(stores.records);
          const integration = await mcpIntegrationStore(stores.records).create(organisationId, {
            slug: "bundle-mcp-upstream",
            name: "Bundle upstream",
            url: upstream.url,
            transport: "http",
            auth_type: "none",
            configurations: {},
            capabilities: [
              { type: "tool", name: "echo", enabled: true },
              { type: "tool", name: "add", enabled: false },
            ],
            server_info: {},
            workspaces: [],
            global_workspace_access: true,
          });
          const server = await mcpServerStore(stores.records).create(organisationId, {
            slug: "bundle-mcp",
            workspaceId: defaultWorkspaceId,
            name: "Bundle MCP",
            mcp_integration_id: integration.id,
            capability_overrides: {},
            default_user_access: "allow",
            user_access: [],
          });
          return server.slug;
        });
        const traceId = `bundle-mcp-${Date.now()}`;
        const client = new McpClient({ name: "bundle", version: "1.0.0" });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${suite.gateway.url}/mcp/${slug}`), {
            requestInit: { headers: { "x-gateway-api-key": suite.gateway.adminKey, "x-gateway-trace-id": traceId } },
          }),
        );
        expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["echo"]);
        const result = await client.callTool({ name: "echo", arguments: { text: "bundled" } });
        expect(result.content).toEqual([{ type: "text", text: "echo: bundled" }]);
        await client.close();
        let logged: any[] = [];
        for (let attempt = 0; attempt < 50 && !logged.some((log) => log.mcp?.method === "tools/call"); attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          logged = (await api("GET", `/v1/logs?trace_id=${traceId}`)).body.data;
        }
        expect(logged.find((log) => log.mcp?.method === "tools/call")).toMatchObject({
          provider: "mcp",
          requestedModel: "bundle-mcp",
          mcp: { name: "echo" },
        });
      } finally {
        await upstream.close();
      }
    });

    it("MCP admin sync, an A2A agent call and OAuth client registration (their SDKs load on first use)", async () => {
      const upstream = await startMcpUpstream();
      const agent = await startEchoAgent();
      try {
        // The MCP admin API pulls the upstream's capabilities through the MCP SDK's client.
        const integration = await api("POST", "/v1/mcp-integrations", {
          name: "Bundle sync",
          slug: "bundle-sync",
          url: upstream.url,
          auth_type: "none",
          transport: "http",
        });
        expect(integration.status, JSON.stringify(integration.body)).toBe(201);
        const synced = await api("POST", `/v1/mcp-integrations/${integration.body.id}/sync`, {});
        expect(synced.status, JSON.stringify(synced.body)).toBe(200);
        const capabilities = await api("GET", `/v1/mcp-integrations/${integration.body.id}/capabilities`);
        expect(JSON.stringify(capabilities.body)).toContain("echo");

        // An A2A agent: its card fetched and checked, then a 0.3 message/send relayed by the A2A SDK's handlers.
        const workspace = await api("POST", "/v1/admin/workspaces", { name: "Bundle agents" });
        const created = await api("POST", "/v2/agent-integrations", {
          name: "Echo",
          slug: "bundle-echo",
          url: agent.url,
          workspace_id: workspace.body.id,
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const key = await api("POST", "/v1/api-keys/workspace/service", {
          name: "bundle-agents",
          workspace_id: workspace.body.id,
          scopes: ["agents.invoke"],
        });
        const answer = await api(
          "POST",
          "/v1/agents/bundle-echo",
          {
            jsonrpc: "2.0",
            id: 1,
            method: "message/send",
            params: {
              message: { kind: "message", messageId: "m-1", role: "user", parts: [{ kind: "text", text: "bundled" }] },
            },
          },
          key.body.key,
        );
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(JSON.stringify(answer.body.result)).toContain("echo: bundled");

        // The OAuth server for MCP clients: metadata and a dynamic registration.
        const metadata = await (await fetch(`${suite.gateway.url}/.well-known/oauth-authorization-server`)).json();
        expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
        const registered = await fetch(`${suite.gateway.url}/oauth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:3999/cb"], token_endpoint_auth_method: "none" }),
        });
        expect(registered.status).toBe(201);
      } finally {
        await upstream.close();
        await agent.close();
      }
    });

    it("an MCP client with only the server's URL: 401, the gateway's OAuth flow (PKCE, sign-in, consent), then tools", async () => {
      const upstream = await startMcpUpstream();
      try {
        const { slug, workspaceId } = await suite.gateway.withStores(async (stores) => {
          const { organisationId, defaultWorkspaceId } = await ensureOrganisation(stores.records);
          const integration = await mcpIntegrationStore(stores.records).create(organisationId, {
            slug: "suite-oauth-upstream",
            name: "OAuth upstream",
            url: upstream.url,
            transport: "http",
            auth_type: "none",
            configurations: {},
            capabilities: [{ type: "tool", name: "echo", enabled: true }],
            server_info: {},
            workspaces: [],
            global_workspace_access: true,
          });
          const server = await mcpServerStore(stores.records).create(organisationId, {
            slug: "suite-oauth",
            workspaceId: defaultWorkspaceId,
            name: "Suite OAuth",
            mcp_integration_id: integration.id,
            capability_overrides: {},
            default_user_access: "allow",
            user_access: [],
          });
          return { slug: server.slug, workspaceId: defaultWorkspaceId };
        });
        const key = await api("POST", "/v1/api-keys/workspace/service", {
          name: "suite-oauth-user",
          workspace_id: workspaceId,
          scopes: ["*"],
        });
        expect(key.status, JSON.stringify(key.body)).toBe(201);
        const serverUrl = `${suite.gateway.url}/mcp/${slug}`;
        const { provider, state } = memoryOAuthProvider("http://127.0.0.1:45679/callback");
        const first = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
        await expect(new McpClient({ name: "suite", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(
          UnauthorizedError,
        );
        expect(state.authorizationUrl?.origin).toBe(new URL(suite.gateway.url).origin);
        // Authorize, sign in and consent are three requests; the pending request between them lives in the store.
        const decided = await signInWithKeyAndAllow(suite.gateway.url, state.authorizationUrl!, key.body.key);
        expect(decided.status).toBe(302);
        await first.finishAuth(codeOf(decided));
        expect(state.tokens?.access_token).toMatch(/^gwoat_/);
        const client = new McpClient({ name: "suite", version: "1.0.0" });
        await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
        expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["echo"]);
        const result = await client.callTool({ name: "echo", arguments: { text: "with a token" } });
        expect(result.content).toEqual([{ type: "text", text: "echo: with a token" }]);
        await client.close();
      } finally {
        await upstream.close();
      }
    });
  });
}
