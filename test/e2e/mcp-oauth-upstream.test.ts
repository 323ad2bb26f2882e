import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { upstreamAccessToken } from "../../core/features/mcp/upstream/oauth-tokens.ts";
import { type McpServer, connectionKey, mcpIntegrationStore, mcpServerStore } from "../../core/features/mcp/records.ts";
import { createSession } from "../../core/identity/sso/sessions.ts";
import { seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockAuthorizationServer, startMockAuthorizationServer } from "../helpers/oauth-authorization-server.ts";

/**
 * Per-user OAuth to an upstream MCP server (`oauth_auto`): the gateway discovers the upstream's authorization
 * server, registers itself, sends the user there with PKCE, exchanges the code at the callback and stores the
 * user's connection sealed; `upstreamAccessToken` then hands out the token and refreshes it when it expires.
 */

let gateway: TestGateway;
let upstream: MockAuthorizationServer;
let organisationId: string;
let server: McpServer;
let userId: string;
let userKey: string;
let otherWorkspaceUserKey: string;

const records = () => gateway.gateway.services.stores.records;

beforeAll(async () => {
  upstream = await startMockAuthorizationServer();
  gateway = await startTestGateway();
  organisationId = gateway.gateway.bootstrap.organisationId;
  const workspace = await seedWorkspace(gateway, "Upstream A");
  const otherWorkspace = await seedWorkspace(gateway, "Upstream B");
  const integration = await mcpIntegrationStore(records()).create(organisationId, {
    slug: "upstream-oauth",
    name: "Upstream with OAuth",
    url: `${upstream.url}/mcp`,
    transport: "http",
    auth_type: "oauth_auto",
    configurations: {},
    capabilities: [],
    server_info: {},
    workspaces: [],
    global_workspace_access: true,
  });
  server = await mcpServerStore(records()).create(organisationId, {
    slug: "upstream-docs",
    workspaceId: workspace.id,
    name: "Upstream docs",
    mcp_integration_id: integration.id,
    capability_overrides: {},
    default_user_access: "allow",
    user_access: [],
  });
  const user = await seedUser(gateway, "erin@example.com");
  userId = user.id;
  await seedMember(gateway, workspace.id, user.id, "member");
  userKey = (
    await createApiKey(records(), {
      organisationId,
      workspaceId: workspace.id,
      name: "erin",
      keyType: "workspace",
      keySubType: "user",
      userId: user.id,
      scopes: [],
    })
  ).secret;
  const other = await seedUser(gateway, "frank@example.com");
  await seedMember(gateway, otherWorkspace.id, other.id, "member");
  otherWorkspaceUserKey = (
    await createApiKey(records(), {
      organisationId,
      workspaceId: otherWorkspace.id,
      name: "frank",
      keyType: "workspace",
      keySubType: "user",
      userId: other.id,
      scopes: [],
    })
  ).secret;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const connect = (headers: Record<string, string>, ref = server.id) =>
  fetch(`${gateway.url}/oauth/upstream/${ref}/connect`, { headers, redirect: "manual" });

describe("per-user OAuth to an upstream MCP server", () => {
  it("connects a user: discovery, registration, PKCE, callback; the connection is stored sealed", async () => {
    const started = await connect({ "x-gateway-api-key": userKey });
    expect(started.status, await started.clone().text()).toBe(302);
    const authorize = new URL(started.headers.get("location")!);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${upstream.url}/authorize`);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${gateway.url}/oauth/upstream/callback`);
    expect(authorize.searchParams.get("resource")).toBe(`${upstream.url}/mcp`);
    expect(upstream.clients.size).toBe(1);

    // The upstream approves and sends the browser back to the gateway.
    const approved = await fetch(authorize, { redirect: "manual" });
    const callback = approved.headers.get("location")!;
    expect(callback).toContain("/oauth/upstream/callback?");
    const done = await fetch(callback, { redirect: "manual" });
    expect(done.status).toBe(200);
    expect(done.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(await done.text()).toContain("Upstream docs");

    const key = connectionKey(server.id, userId);
    const stored = await records().get(key.pk, key.sk);
    expect(stored).toMatchObject({ serverId: server.id, userId, organisationId, workspaceId: server.workspaceId });
    const firstToken = upstream.accessTokens.at(-1)!;
    expect(JSON.stringify(stored)).not.toContain(firstToken);
    expect(JSON.stringify(stored)).not.toMatch(/upstream-rt-|upstream-secret-/);

    // A callback works once.
    const replay = await fetch(callback, { redirect: "manual" });
    expect(replay.status).toBe(401);

    expect(await upstreamAccessToken(gateway.gateway.services, server, userId)).toBe(firstToken);
    expect(await upstreamAccessToken(gateway.gateway.services, server, "usr_nobody")).toBeUndefined();
  });

  it("refreshes an expired token, saves the rotated tokens, and reuses them until they expire", async () => {
    const key = connectionKey(server.id, userId);
    await records().update(key.pk, key.sk, { set: { expires_at: Math.floor(Date.now() / 1000) - 5 } });
    const before = upstream.grants.length;
    const refreshed = await upstreamAccessToken(gateway.gateway.services, server, userId);
    expect(upstream.grants.slice(before)).toEqual(["refresh_token"]);
    expect(refreshed).toBe(upstream.accessTokens.at(-1));
    expect(await upstreamAccessToken(gateway.gateway.services, server, userId)).toBe(refreshed);
    expect(upstream.grants.length).toBe(before + 1);
    // The rotated refresh token was saved: a second expiry refreshes again with it.
    await records().update(key.pk, key.sk, { set: { expires_at: Math.floor(Date.now() / 1000) - 5 } });
    const again = await upstreamAccessToken(gateway.gateway.services, server, userId);
    expect(again).toBe(upstream.accessTokens.at(-1));
    expect(again).not.toBe(refreshed);
  });

  it("connects a user signed in by session cookie too", async () => {
    const session = await createSession(records(), { organisationId, userId }, 3600);
    const started = await connect({ cookie: `gateway_session=${session.id}` }, server.slug);
    expect(started.status).toBe(302);
  });

  it("refuses callers that are not a user of the server's workspace", async () => {
    const service = await connect({ "x-gateway-api-key": gateway.adminKey });
    expect(service.status).toBe(403);
    const otherWorkspace = await connect({ "x-gateway-api-key": otherWorkspaceUserKey });
    expect(otherWorkspace.status).toBe(404);
    const anonymous = await connect({});
    expect(anonymous.status).toBe(401);
    const otherOrganisation = await createApiKey(records(), {
      organisationId: "org_upstream_other",
      name: "other",
      keyType: "organisation",
      keySubType: "user",
      userId,
      scopes: ["*"],
    });
    expect((await connect({ "x-gateway-api-key": otherOrganisation.secret })).status).toBe(404);
    const forged = await fetch(`${gateway.url}/oauth/upstream/callback?code=x&state=forged`);
    expect(forged.status).toBe(401);
  });
});
