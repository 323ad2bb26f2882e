import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.ts";
import { seedMcpServer } from "../helpers/mcp-records.ts";
import { codeOf, memoryOAuthProvider, signInWithKeyAndAllow } from "../helpers/oauth-browser.ts";

/**
 * An MCP client that knows nothing but the server's URL, as MCP clients do: the MCP SDK's own client with an
 * OAuth provider meets the endpoint's 401, follows it to the gateway's OAuth server (discovery, dynamic
 * registration, PKCE), the user signs in with a key and allows, and the client then lists and calls tools
 * with the token it got. The token only opens the server it was granted for.
 */

const REDIRECT = "http://127.0.0.1:45679/callback";
let gateway: TestGateway;
let upstream: McpUpstream;
let serverUrl: string;
let otherServerUrl: string;
let workspaceKey: string;

beforeAll(async () => {
  upstream = await startMcpUpstream();
  gateway = await startTestGateway();
  const workspace = await seedWorkspace(gateway, "MCP OAuth client");
  const other = await seedWorkspace(gateway, "MCP OAuth other");
  workspaceKey = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "oauth-client",
      workspace_id: workspace.id,
      scopes: ["*"],
    })
  ).key;
  const { server } = await seedMcpServer(gateway, {
    url: upstream.url,
    workspaceId: workspace.id,
    disabled: ["secret_admin_tool"],
  });
  serverUrl = `${gateway.url}/mcp/${server.slug}`;
  const { server: otherServer } = await seedMcpServer(gateway, { url: upstream.url, workspaceId: other.id });
  otherServerUrl = `${gateway.url}/mcp/${otherServer.slug}`;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe("an MCP client with only the server's URL", () => {
  it("is sent through the gateway's OAuth flow by the 401, then lists and calls tools with its token", async () => {
    const { provider, state } = memoryOAuthProvider(REDIRECT);
    const first = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
    const client = new Client({ name: "oauth-e2e", version: "1.0.0" });
    await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    // The SDK found the gateway's authorization server, registered itself and asked for a PKCE code for this server.
    expect(state.client?.client_id).toBeTruthy();
    expect(state.authorizationUrl?.origin).toBe(new URL(gateway.url).origin);
    expect(state.authorizationUrl?.searchParams.get("resource")).toBe(serverUrl);
    expect(state.authorizationUrl?.searchParams.get("code_challenge_method")).toBe("S256");

    const decided = await signInWithKeyAndAllow(gateway.url, state.authorizationUrl!, workspaceKey);
    expect(decided.status).toBe(302);
    const code = codeOf(decided);
    await first.finishAuth(code);
    expect(state.tokens?.access_token).toMatch(/^gwoat_/);

    const connected = new Client({ name: "oauth-e2e", version: "1.0.0" });
    await connected.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
    const tools = (await connected.listTools()).tools.map((tool) => tool.name).sort();
    expect(tools).toEqual(["add", "echo"]);
    const result = await connected.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    expect(result.structuredContent).toEqual({ sum: 5 });
    await connected.close();

    // The upstream never saw the OAuth token, nor any gateway credential.
    for (const headers of upstream.requestHeaders) {
      expect(JSON.stringify(headers)).not.toContain(state.tokens!.access_token);
      expect(JSON.stringify(headers)).not.toContain(workspaceKey);
    }

    // The token was granted for this server: another server's endpoint refuses it.
    const refused = await fetch(otherServerUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${state.tokens!.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain("invalid_token");
  });
});
