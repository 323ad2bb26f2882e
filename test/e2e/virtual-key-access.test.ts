import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Organisation-level virtual keys follow the organisation integrations' workspace-access rule: no workspace
 * may use one until an organisation-level caller enables it for that workspace (or for all); until then it is
 * unknown to the workspace (404), like another workspace's.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let admin: string;
let teamA: { id: string };
let teamB: { id: string };
let keyA: string;
let keyB: string;
const SLUG = "org-wide-vk";

const chatBody = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] };
const viaVirtualKey = (key: string) =>
  call(gateway, key, "POST", "/v1/chat/completions", chatBody, { "x-gateway-virtual-key": SLUG });
const viaConfig = (key: string) =>
  call(gateway, key, "POST", "/v1/chat/completions", chatBody, {
    "x-gateway-config": JSON.stringify({ strategy: { mode: "fallback" }, targets: [{ virtual_key: SLUG }] }),
  });
const shareWith = (body: unknown, key = admin) =>
  call(gateway, key, "PUT", `/v1/virtual-keys/${SLUG}/workspaces`, body);

beforeAll(async () => {
  upstream = await startOpenAIMock();
  gateway = await startTestGateway();
  admin = gateway.adminKey;
  teamA = await seedWorkspace(gateway, "VK team A");
  teamB = await seedWorkspace(gateway, "VK team B");
  const scopes = ["virtual_keys.read", "virtual_keys.list", "virtual_keys.update"];
  keyA = (await createKey(gateway, admin, "workspace", "service", { name: "a", workspace_id: teamA.id, scopes })).key;
  keyB = (await createKey(gateway, admin, "workspace", "service", { name: "b", workspace_id: teamB.id, scopes })).key;
  const created = await call(gateway, admin, "POST", "/v1/virtual-keys", {
    name: "Org-wide",
    slug: SLUG,
    provider: "openai",
    key: "sk-org-wide-upstream",
    custom_host: `${upstream.url}/v1`,
  });
  expect(created.status, created.text).toBe(201);
  expect(created.body.global_workspace_access).toEqual({ enabled: false });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe("organisation-level virtual keys", () => {
  it("serve organisation keys, and no workspace until enabled for it", async () => {
    expect((await viaVirtualKey(admin)).status).toBe(200);
    for (const answer of [await viaVirtualKey(keyA), await viaConfig(keyA)]) {
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe("provider_not_found");
    }
    expect((await call(gateway, keyA, "GET", `/v1/virtual-keys/${SLUG}`)).status).toBe(404);
    const listed = await call(gateway, keyA, "GET", "/v1/virtual-keys");
    expect(listed.body.data.map((item: any) => item.slug)).not.toContain(SLUG);
    // A workspace key cannot enable it for itself.
    const self = await shareWith({ workspace_ids: [teamA.id] }, keyA);
    expect(self.status).toBe(403);
    expect(self.body.error.code).toBe("admin_required");
  });

  it("serves the workspaces it is enabled for, and stops when disabled", async () => {
    const enabled = await shareWith({ workspaces: [{ id: teamA.id, enabled: true }] });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ global_workspace_access: { enabled: false }, total: 1 });
    expect((await call(gateway, admin, "GET", `/v1/virtual-keys/${SLUG}/workspaces`)).body.data).toEqual([
      expect.objectContaining({ id: teamA.id, enabled: true }),
    ]);
    expect((await viaVirtualKey(keyA)).status).toBe(200);
    expect((await viaConfig(keyA)).status).toBe(200);
    expect((await call(gateway, keyA, "GET", `/v1/virtual-keys/${SLUG}`)).status).toBe(200);
    // Readable, not writable: it is the organisation's.
    expect((await call(gateway, keyA, "PUT", `/v1/virtual-keys/${SLUG}`, { name: "mine" })).status).toBe(403);
    expect((await viaVirtualKey(keyB)).status).toBe(404);

    expect((await shareWith({ global_workspace_access: { enabled: true } })).status).toBe(200);
    expect((await viaVirtualKey(keyB)).status).toBe(200);
    expect((await shareWith({ global_workspace_access: { enabled: false } })).status).toBe(200);
    expect((await viaVirtualKey(keyB)).status).toBe(404);

    expect((await shareWith({ workspaces: [{ id: teamA.id, enabled: false }] })).status).toBe(200);
    expect((await viaVirtualKey(keyA)).status).toBe(404);
  });

  it("keeps a workspace's own virtual key to that workspace", async () => {
    const own = await call(gateway, admin, "POST", "/v1/virtual-keys", {
      name: "Team A's",
      slug: "team-a-vk",
      provider: "openai",
      key: "sk-team-a-upstream",
      custom_host: `${upstream.url}/v1`,
      workspace_id: teamA.id,
    });
    expect(own.body.global_workspace_access).toBeNull();
    const headers = { "x-gateway-virtual-key": "team-a-vk" };
    expect((await call(gateway, keyA, "POST", "/v1/chat/completions", chatBody, headers)).status).toBe(200);
    expect((await call(gateway, keyB, "POST", "/v1/chat/completions", chatBody, headers)).status).toBe(404);
    const shared = await call(gateway, admin, "PUT", "/v1/virtual-keys/team-a-vk/workspaces", {
      workspace_ids: [teamB.id],
    });
    expect(shared.status).toBe(403);
  });
});
