import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { sealValue } from "../../core/control/sealed-values.ts";
import { connectionKey } from "../../core/features/mcp/records.ts";
import { ROUTE_FAMILIES } from "../../core/routes/table.ts";
import { call, createKey, seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.ts";
import { sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * The MCP control plane through the portkey-ai SDK's `mcpIntegrations.*` and `mcpServers.*`, unmodified, against a
 * real MCP server (built with the MCP SDK) that demands a header: the sealed header reaches it and never comes
 * back; sync, capability switches, servers that narrow them, user access, tokens, connections, workspace access;
 * other workspaces and organisations see nothing.
 */

const SECRET = "upstream-secret-value-0123456789";
const TOKEN = "user-access-token-abcdefghijklmnop";
const REFRESH = "user-refresh-token-abcdefghijklmnop";

let gateway: TestGateway;
let upstream: McpUpstream;
let wsA: { id: string };
let wsB: { id: string };
let keyA: string;
let keyB: string;
let userKeyA: string;
let otherUserKeyA: string;
let userA: { id: string };
let otherUserA: { id: string };
let otherOrgKey: string;
/** Every answer body seen, to prove no secret ever comes back. */
const answers: string[] = [];

const MCP_SCOPES = ["create", "read", "list", "update", "delete"].flatMap((action) => [
  `mcp_integrations.${action}`,
  `mcp_servers.${action}`,
]);

beforeAll(async () => {
  [upstream, gateway] = await Promise.all([
    startMcpUpstream({ requiredHeaders: { "x-upstream-key": SECRET } }),
    startTestGateway(),
  ]);
  wsA = await seedWorkspace(gateway, "MCP A");
  wsB = await seedWorkspace(gateway, "MCP B");
  const serviceKey = async (workspace: { id: string }, name: string) =>
    (
      await createKey(gateway, gateway.adminKey, "workspace", "service", {
        name,
        workspace_id: workspace.id,
        scopes: [...MCP_SCOPES, "audit_logs.list"],
      })
    ).key;
  [keyA, keyB] = await Promise.all([serviceKey(wsA, "mcp a"), serviceKey(wsB, "mcp b")]);
  userA = await seedUser(gateway, "mcp-user-a@example.com");
  otherUserA = await seedUser(gateway, "mcp-other-a@example.com");
  await seedMember(gateway, wsA.id, userA.id, "member");
  await seedMember(gateway, wsA.id, otherUserA.id, "member");
  const userKey = async (user: { id: string }, name: string) =>
    (
      await createKey(gateway, gateway.adminKey, "workspace", "user", {
        name,
        workspace_id: wsA.id,
        user_id: user.id,
        scopes: MCP_SCOPES,
      })
    ).key;
  [userKeyA, otherUserKeyA] = await Promise.all([userKey(userA, "user a"), userKey(otherUserA, "other user a")]);
  otherOrgKey = (
    await createApiKey(gateway.gateway.services.stores.records, {
      organisationId: "org_other_mcp",
      name: "other organisation",
      keyType: "organisation",
      keySubType: "service",
      scopes: ["*"],
    })
  ).secret;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** A portkey-ai client that records every answer it gets (its own fetch, wrapped). */
function portkeyFor(apiKey: string) {
  const client = new Portkey({ apiKey, baseURL: `${gateway.url}/v1` });
  const holder = client as unknown as { fetch: typeof fetch };
  const original = holder.fetch;
  holder.fetch = async (input, init) => {
    const response = await original(input, init);
    answers.push(await response.clone().text());
    return response;
  };
  return client;
}

/** The `data` of a list answer (the SDK types these answers loosely). */
const items = (answer: unknown) => (answer as { data: any[] }).data;

async function api(key: string, method: string, path: string, body?: unknown) {
  const answer = await call(gateway, key, method, path, body);
  answers.push(answer.text);
  return answer;
}

/** The HTTP status and error of a rejected SDK call. */
async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    const { status, error: body } = error as { status?: number; error?: { error?: { param?: string } } };
    return { status, param: body?.error?.param };
  }
  throw new Error("expected the call to fail");
}

async function headersIntegration(key: string, slug: string, extra: Record<string, unknown> = {}) {
  return portkeyFor(key).mcpIntegrations.create({
    name: `Upstream ${slug}`,
    slug,
    url: upstream.url,
    auth_type: "headers",
    transport: "http",
    configurations: { headers: { "X-Upstream-Key": SECRET } },
    ...extra,
  });
}

/** Valid bodies for routes whose `{}` is not, so that their answer comes from the lookup. */
const VALID_BODIES: Record<string, unknown> = {
  "/v1/mcp-integrations/:id/workspaces": { workspaces: [] },
  "/v1/mcp-integrations/:id/capabilities": { capabilities: [] },
  "/v1/mcp-servers/:id/capabilities": { capabilities: [] },
  "/v1/mcp-servers/:id/tokens": { access_token: "probe-token" },
};

describe("MCP control plane", () => {
  it("registers an upstream, syncs it, narrows it on a server, and controls users and tokens (portkey-ai SDK)", async () => {
    const portkey = portkeyFor(keyA);
    const created = await headersIntegration(keyA, "team-a-upstream");
    expect(created.id).toMatch(/^mcpi_/);
    expect(created.slug).toBe("team-a-upstream");

    const stored = await portkey.mcpIntegrations.retrieve({ id: "team-a-upstream" });
    expect(stored).toMatchObject({ url: upstream.url, auth_type: "headers", workspace_id: wsA.id });
    expect(stored.configurations?.headers["X-Upstream-Key"]).toContain("********");

    // An empty sync pulls from the upstream with the sealed header.
    const before = upstream.requestHeaders.length;
    const synced = await portkey.mcpIntegrations.sync({ id: created.id! });
    expect(synced).toMatchObject({ sync_status: "synced", capabilities: { tools: 3, prompts: 1, resources: 1 } });
    expect(upstream.requestHeaders.slice(before).every((headers) => headers["x-upstream-key"] === SECRET)).toBe(true);
    const capabilities = await portkey.mcpIntegrations.capabilities.list({ id: created.id! });
    expect(items(capabilities).map((item: { name: string }) => item.name)).toEqual(
      expect.arrayContaining(["echo", "add", "secret_admin_tool", "greet", "memo://readme"]),
    );
    await portkey.mcpIntegrations.capabilities.update({
      id: created.id!,
      capabilities: [{ name: "secret_admin_tool", type: "tool", enabled: false }],
    });
    const metadata = await portkey.mcpIntegrations.metadata.get({ id: created.id! });
    expect(metadata).toMatchObject({ server_name: "test-upstream", server_version: "1.2.3", sync_status: "synced" });
    const tested = await portkey.mcpIntegrations.test({ id: created.id! });
    expect(tested).toMatchObject({ success: true, server_info: { name: "test-upstream" }, capabilities: { tools: 3 } });

    // A server exposes it in the workspace; its capabilities reflect the integration's switch.
    const server = await portkey.mcpServers.create({
      name: "Team A tools",
      mcp_integration_id: created.id!,
      slug: "team-a-tools",
    });
    expect(server.id).toMatch(/^mcps_/);
    const shown = await portkey.mcpServers.retrieve({ id: "team-a-tools" });
    expect(shown).toMatchObject({
      url: `${gateway.url}/mcp/team-a-tools`,
      workspace_id: wsA.id,
      mcp_integration_id: created.id,
      metadata: { server_name: "test-upstream" },
    });
    const listed = await portkey.mcpServers.list();
    expect(listed.data?.map((item) => item.slug)).toEqual(["team-a-tools"]);
    const enabled = async () =>
      Object.fromEntries(
        items(await portkey.mcpServers.capabilities.list({ id: server.id! })).map(
          (item: { type: string; name: string; enabled: boolean }) => [`${item.type}:${item.name}`, item.enabled],
        ),
      );
    expect(await enabled()).toMatchObject({ "tool:echo": true, "tool:add": true, "tool:secret_admin_tool": false });
    // Narrowing only: enabling what the integration disabled is refused, disabling more is fine.
    expect(
      await failure(
        portkey.mcpServers.capabilities.update({
          id: server.id!,
          capabilities: [{ name: "secret_admin_tool", type: "tool", enabled: true }],
        }),
      ),
    ).toEqual({ status: 400, param: "capabilities[0].enabled" });
    await portkey.mcpServers.capabilities.update({
      id: server.id!,
      capabilities: [{ name: "add", type: "tool", enabled: false }],
    });
    expect(await enabled()).toMatchObject({ "tool:echo": true, "tool:add": false });
    const resynced = await portkey.mcpServers.capabilities.sync({ id: server.id!, capabilities: [] });
    expect(resynced).toMatchObject({ sync_status: "synced" });
    expect(await enabled()).toMatchObject({ "tool:add": false, "tool:secret_admin_tool": false });
    expect(await portkey.mcpServers.test({ id: server.id! })).toMatchObject({ success: true });
    expect(await portkey.mcpServers.metadata.get({ id: server.id! })).toMatchObject({ server_name: "test-upstream" });
    await portkey.mcpServers.metadata.sync({ id: server.id!, title: "Team A's tools" });
    expect(await portkey.mcpServers.metadata.get({ id: server.id! })).toMatchObject({
      title: "Team A's tools",
      server_name: "test-upstream",
    });

    // User access: deny by default, allow one user, check as each.
    await portkey.mcpServers.userAccess.update({ id: server.id!, default_user_access: "deny" });
    const asUser = portkeyFor(userKeyA);
    expect(await asUser.mcpServers.userAccess.check({ id: server.id! })).toMatchObject({ allowed: false });
    await portkey.mcpServers.userAccess.update({ id: server.id!, user_access: [{ user_id: userA.id, enabled: true }] });
    expect(await asUser.mcpServers.userAccess.check({ id: server.id! })).toMatchObject({
      allowed: true,
      user_id: userA.id,
    });
    expect(await portkeyFor(otherUserKeyA).mcpServers.userAccess.check({ id: server.id! })).toMatchObject({
      allowed: false,
    });
    expect(await portkey.mcpServers.userAccess.list({ id: server.id! })).toMatchObject({
      default_user_access: "deny",
      user_access: [{ user_id: userA.id, enabled: true }],
    });
    // A member cannot change who uses the server.
    expect(
      (await failure(asUser.mcpServers.userAccess.update({ id: server.id!, default_user_access: "allow" }))).status,
    ).toBe(403);

    // Tokens: the user's own connection, sealed, shown only as a hint.
    await asUser.mcpServers.setTokens({ id: server.id!, access_token: TOKEN, refresh_token: REFRESH });
    const tokens = await asUser.mcpServers.getTokens({ id: server.id! });
    expect(tokens).toMatchObject({ has_token: true, has_refresh_token: true, type: "user", user_id: userA.id });
    expect((tokens as unknown as { access_token: string }).access_token).toContain("********");
    const connections = await portkey.mcpServers.connections.list({ id: server.id! });
    expect(items(connections)).toEqual([expect.objectContaining({ user_id: userA.id, type: "user" })]);
    expect(items(await portkeyFor(otherUserKeyA).mcpServers.connections.list({ id: server.id! }))).toEqual([]);
    expect(await portkey.mcpServers.getClientInfo({ id: server.id! })).toMatchObject({ client_id: null });
    await asUser.mcpServers.deleteTokens({ id: server.id! });
    expect(await asUser.mcpServers.getTokens({ id: server.id! })).toMatchObject({ has_token: false });

    // The masked header sent back keeps the stored one: the upstream still gets the secret.
    await portkey.mcpIntegrations.update({
      id: created.id!,
      description: "updated",
      configurations: { headers: { "X-Upstream-Key": stored.configurations?.headers["X-Upstream-Key"] } },
    });
    expect(await portkey.mcpIntegrations.sync({ id: created.id! })).toMatchObject({ sync_status: "synced" });
    expect(upstream.requestHeaders.at(-1)?.["x-upstream-key"]).toBe(SECRET);

    // Deleting: the integration is refused while a server exposes it.
    expect((await failure(portkey.mcpIntegrations.delete({ id: created.id! }))).status).toBe(409);
    await portkey.mcpServers.delete({ id: server.id! });
    expect((await failure(portkey.mcpServers.retrieve({ id: server.id! }))).status).toBe(404);
    await portkey.mcpIntegrations.delete({ id: created.id! });
    expect((await failure(portkey.mcpIntegrations.retrieve({ id: created.id! }))).status).toBe(404);

    const audit = await api(gateway.adminKey, "GET", "/v1/audit-logs?limit=100");
    const actions = audit.body.data
      .filter((entry: { resource_type?: string; resourceType?: string }) =>
        ["mcp_integration", "mcp_server", "mcp_connection"].includes(entry.resource_type ?? entry.resourceType ?? ""),
      )
      .map((entry: { action: string }) => entry.action);
    expect(actions).toEqual(
      expect.arrayContaining(["create", "sync", "update_capabilities", "update_user_access", "delete"]),
    );
  });

  it("stores a pushed sync (camelCase and snake_case keys), and answers 502 without secrets when the upstream refuses", async () => {
    const portkey = portkeyFor(keyA);
    const { id } = await headersIntegration(keyA, "pushed-upstream");
    await portkey.mcpIntegrations.sync({
      id: id!,
      server_info: { name: "pushed", version: "9.9", protocolVersion: "2025-06-18" } as never,
      capabilities: [
        { name: "camel", type: "tool", inputSchema: { type: "object" } },
        { name: "snake", type: "tool", input_schema: { type: "object" } },
        { type: "resource", uri: "memo://pushed", mime_type: "text/plain" },
        { type: "resource_template", uriTemplate: "memo://t/{id}" },
      ],
    });
    const capabilities = items(await portkey.mcpIntegrations.capabilities.list({ id: id! }));
    expect(capabilities.map((item: { type: string; name: string }) => `${item.type}:${item.name}`).sort()).toEqual([
      "resource:memo://pushed",
      "resource_template:memo://t/{id}",
      "tool:camel",
      "tool:snake",
    ]);
    expect(capabilities.find((item: { name: string }) => item.name === "snake").schema).toEqual({
      inputSchema: { type: "object" },
    });
    expect(await portkey.mcpIntegrations.metadata.get({ id: id! })).toMatchObject({
      server_name: "pushed",
      protocol_version: "2025-06-18",
    });

    // A wrong header: the upstream answers 401; the failure is stored and answered 502, no secret in sight.
    const wrong = "wrong-secret-value-9876543210";
    await portkey.mcpIntegrations.update({ id: id!, configurations: { headers: { "X-Upstream-Key": wrong } } });
    const failed = await api(keyA, "POST", `/v1/mcp-integrations/${id}/sync`, {});
    expect(failed.status).toBe(502);
    expect(failed.body.error.message).toMatch(/401|unauthorized/i);
    expect(failed.text).not.toContain(wrong);
    expect(await portkey.mcpIntegrations.retrieve({ id: id! })).toMatchObject({ sync_status: "failed" });
    expect(await portkey.mcpIntegrations.metadata.get({ id: id! })).toMatchObject({
      sync_status: "failed",
      last_sync_error: expect.any(String),
    });
    expect(await portkey.mcpIntegrations.test({ id: id! })).toMatchObject({ success: false });
    expect(answers.join("\n")).not.toContain(wrong);
  });

  it("opens an organisation-wide integration only to the workspaces it is enabled for", async () => {
    const admin = portkeyFor(gateway.adminKey);
    const { id } = await headersIntegration(gateway.adminKey, "org-upstream");
    // Workspace keys cannot create organisation-wide integrations: theirs belong to their workspace.
    const own = await headersIntegration(keyB, "b-own-upstream");
    expect((await portkeyFor(keyB).mcpIntegrations.retrieve({ id: own.id! })).workspace_id).toBe(wsB.id);

    const createIn = (key: string) => portkeyFor(key).mcpServers.create({ name: "Org tools", mcp_integration_id: id! });
    expect(await failure(createIn(keyA))).toEqual({ status: 400, param: "mcp_integration_id" });
    expect((await failure(portkeyFor(keyA).mcpIntegrations.retrieve({ id: id! }))).status).toBe(404);

    expect(
      await failure(
        admin.mcpIntegrations.workspaces.update({ id: id!, workspaces: [{ id: "ws_nope", enabled: true }] }),
      ),
    ).toEqual({ status: 400, param: "workspaces[0].id" });
    await admin.mcpIntegrations.workspaces.update({ id: id!, workspaces: [{ id: wsA.id, enabled: true }] });
    expect(await admin.mcpIntegrations.workspaces.list({ id: id! })).toMatchObject({
      workspaces: [{ id: wsA.id, enabled: true }],
      global_workspace_access: { enabled: false },
    });
    const server = await createIn(keyA);
    expect(server.slug).toEqual(expect.any(String));
    expect((await portkeyFor(keyA).mcpIntegrations.retrieve({ id: id! })).id).toBe(id);
    expect(await failure(createIn(keyB))).toEqual({ status: 400, param: "mcp_integration_id" });
    // A workspace key may use it, not change it or its workspace access.
    expect((await failure(portkeyFor(keyA).mcpIntegrations.update({ id: id!, name: "mine" }))).status).toBe(403);
    expect((await failure(portkeyFor(keyA).mcpIntegrations.workspaces.list({ id: id! }))).status).toBe(403);
    const listB = await portkeyFor(keyB).mcpIntegrations.list({ type: "all" });
    expect(listB.data?.map((item) => item.id)).toEqual([own.id]);

    await admin.mcpIntegrations.workspaces.update({
      id: id!,
      workspaces: [],
      global_workspace_access: { enabled: true },
    });
    expect((await createIn(keyB)).id).toMatch(/^mcps_/);
    const organisationList = await admin.mcpIntegrations.list({ type: "organisation", page_size: 10 });
    expect(organisationList.data?.map((item) => item.id)).toContain(id);
    expect(organisationList.data?.every((item) => item.workspace_id === null)).toBe(true);
  });

  it("answers another workspace and another organisation 404 on every route of A's integration and server", async () => {
    const integration = await headersIntegration(keyA, "private-upstream");
    const server = await portkeyFor(keyA).mcpServers.create({
      name: "Private",
      mcp_integration_id: integration.id!,
      slug: "private-tools",
    });
    const family = ROUTE_FAMILIES.find((entry) => entry.name === "mcp-admin")!;
    const failures: string[] = [];
    for (const route of family.routes.filter((entry) => entry.path.includes(":id"))) {
      const target = route.path.startsWith("/v1/mcp-integrations") ? integration : server;
      for (const ref of [target.id!, target.slug!]) {
        for (const [name, key] of [
          ["workspace B", keyB],
          ["other organisation", otherOrgKey],
        ] as const) {
          const body =
            route.method === "GET" || route.method === "DELETE" ? undefined : (VALID_BODIES[route.path] ?? {});
          const answer = await api(key, route.method, route.path.replace(":id", ref), body);
          if (answer.status !== 404)
            failures.push(`${name}: ${route.method} ${route.path} (${ref}) -> ${answer.status}`);
        }
      }
    }
    expect(failures).toEqual([]);
    for (const key of [keyB, otherOrgKey]) {
      const integrations = await api(key, "GET", "/v1/mcp-integrations");
      const servers = await api(key, "GET", "/v1/mcp-servers");
      expect(integrations.text).not.toContain(integration.id!);
      expect(servers.text).not.toContain(server.id!);
    }
    // Still A's, unchanged.
    expect(await portkeyFor(keyA).mcpServers.retrieve({ id: server.id! })).toMatchObject({ name: "Private" });
  });

  it("lists users' connections without tokens; an admin removes any, a user only their own", async () => {
    const integration = await headersIntegration(keyA, "connections-upstream");
    const server = await portkeyFor(keyA).mcpServers.create({
      name: "Connections",
      mcp_integration_id: integration.id!,
    });
    const { records, secrets } = gateway.gateway.services.stores;
    for (const user of [userA, otherUserA]) {
      await records.put({
        ...connectionKey(server.id!, user.id),
        serverId: server.id!,
        organisationId: gateway.gateway.bootstrap.organisationId,
        workspaceId: wsA.id,
        userId: user.id,
        access_token: await sealValue(secrets, `${TOKEN}-${user.id}`),
        expires_at: Math.floor(Date.now() / 1000) + 3600,
        scope: "read",
        createdAt: 1,
        updatedAt: 1,
      });
    }
    const all = await portkeyFor(keyA).mcpServers.connections.list({ id: server.id!, page_size: 10 });
    expect(
      items(all)
        .map((item: { user_id: string }) => item.user_id)
        .sort(),
    ).toEqual([userA.id, otherUserA.id].sort());
    expect(JSON.stringify(all)).not.toContain(TOKEN);
    const filtered = await portkeyFor(keyA).mcpServers.connections.list({ id: server.id!, user_id: userA.id });
    expect(items(filtered)).toHaveLength(1);
    // A user cannot remove another's connection, but removes their own.
    expect(
      (await failure(portkeyFor(userKeyA).mcpServers.connections.delete({ id: server.id!, user_id: otherUserA.id })))
        .status,
    ).toBe(403);
    await portkeyFor(userKeyA).mcpServers.connections.delete({ id: server.id! });
    await portkeyFor(keyA).mcpServers.connections.delete({ id: server.id!, user_id: otherUserA.id });
    expect(items(await portkeyFor(keyA).mcpServers.connections.list({ id: server.id! }))).toEqual([]);
  });

  it("authenticates with OAuth client credentials: the sealed client secret goes only to the token endpoint", async () => {
    const clientSecret = "client-secret-value-0123456789";
    const [tokenServer, guarded] = await Promise.all([
      startMockServer((_request, response) =>
        sendJson(response, 200, { access_token: "cc-access-token-0123456789", token_type: "Bearer", expires_in: 600 }),
      ),
      startMcpUpstream({ requiredHeaders: { authorization: "Bearer cc-access-token-0123456789" } }),
    ]);
    try {
      const portkey = portkeyFor(keyA);
      const { id } = await portkey.mcpIntegrations.create({
        name: "Client credentials",
        url: guarded.url,
        auth_type: "oauth_client_credentials",
        transport: "http",
        configurations: {
          client_id: "gateway-client",
          client_secret: clientSecret,
          token_url: `${tokenServer.url}/token`,
        },
      });
      expect(await portkey.mcpIntegrations.sync({ id: id! })).toMatchObject({ sync_status: "synced" });
      const basic = Buffer.from(`gateway-client:${clientSecret}`).toString("base64");
      expect(tokenServer.requests[0]?.headers.authorization).toBe(`Basic ${basic}`);
      expect(guarded.requestHeaders.every((headers) => !JSON.stringify(headers).includes(clientSecret))).toBe(true);
      const shown = await portkey.mcpIntegrations.retrieve({ id: id! });
      expect(shown.configurations).toMatchObject({ client_id: "gateway-client", client_secret: "cl********6789" });
      const server = await portkey.mcpServers.create({ name: "CC", mcp_integration_id: id! });
      expect(await portkey.mcpServers.getClientInfo({ id: server.id! })).toMatchObject({
        client_id: "gateway-client",
        has_client_secret: true,
        source: "integration",
      });
      expect(answers.join("\n")).not.toContain(clientSecret);
    } finally {
      await Promise.all([tokenServer.close(), guarded.close()]);
    }
  });

  it("answers bad bodies 400 naming the param, and refuses private upstream addresses", async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", "/v1/mcp-integrations", { name: "x", url: upstream.url, auth_type: "bogus" }, "auth_type"],
      ["POST", "/v1/mcp-integrations", { name: "x", url: "http://169.254.169.254/mcp", auth_type: "none" }, "url"],
      [
        "POST",
        "/v1/mcp-integrations",
        { name: "x", url: upstream.url, auth_type: "none", transport: "ws" },
        "transport",
      ],
      [
        "POST",
        "/v1/mcp-integrations",
        { name: "x", url: upstream.url, auth_type: "headers", configurations: { headers: { Host: "evil" } } },
        "configurations.headers.Host",
      ],
      [
        "POST",
        "/v1/mcp-integrations",
        { name: "x", url: upstream.url, auth_type: "headers" },
        "configurations.headers",
      ],
      [
        "POST",
        "/v1/mcp-integrations",
        { name: "x", url: upstream.url, auth_type: "oauth_client_credentials", configurations: { client_id: "c" } },
        "configurations.client_secret",
      ],
      ["POST", "/v1/mcp-servers", { name: "x" }, "mcp_integration_id"],
      ["POST", "/v1/mcp-integrations", { name: "x", url: upstream.url, auth_type: "none", extra: 1 }, ""],
    ];
    for (const [method, path, body, param] of cases) {
      const answer = await api(keyA, method, path, body);
      expect(answer.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      if (param) expect(answer.body.error.param, JSON.stringify(body)).toBe(param);
    }
  });

  it("never answers, audits or logs a stored secret", async () => {
    const audit = await api(gateway.adminKey, "GET", "/v1/audit-logs?limit=100");
    expect(audit.text).not.toContain(SECRET);
    expect(audit.text).not.toContain(TOKEN);
    const logs = await api(gateway.adminKey, "GET", "/v1/logs?limit=100");
    expect(logs.status).toBe(200);
    expect(logs.text).not.toContain(SECRET);
    const everything = answers.join("\n");
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(TOKEN);
    expect(everything).not.toContain(REFRESH);
  });
});
