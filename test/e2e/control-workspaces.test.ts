import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { getMembership, listUserWorkspaces } from "../../core/control/workspaces/members.ts";
import { type Resource, ResourceStore } from "../../core/control/resource-store.ts";
import { userStore } from "../../core/control/users/store.ts";
import { workspaceStore, workspacesUsingConfig } from "../../core/control/workspaces/store.ts";
import { type TestGateway, apiCaller, startTestGateway } from "../helpers/gateway.ts";

/** Workspaces and members through HTTP on the local platform (spec 2.11, 4.8, 5.5, 7). */

let gateway: TestGateway;
let organisationId: string;
let defaultWorkspaceId: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  ({ organisationId, defaultWorkspaceId } = gateway.gateway.bootstrap);
});

afterAll(async () => {
  await gateway?.close();
});

const records = () => gateway.gateway.services.stores.records;

const api = apiCaller(() => gateway);

async function workspaceKey(workspaceId: string, scopes: string[]): Promise<string> {
  const created = await createApiKey(records(), {
    organisationId,
    workspaceId,
    name: "workspace service key",
    keyType: "workspace",
    keySubType: "service",
    scopes,
  });
  return created.secret;
}

async function newUser(email: string) {
  return userStore(records()).create(organisationId, { slug: email, email, role: "member" });
}

describe("workspaces", () => {
  it("bootstrap made the default workspace through the resource store; it cannot be deleted", async () => {
    const stored = await workspaceStore(records()).get(organisationId, "default");
    expect(stored).toMatchObject({ id: defaultWorkspaceId, slug: "default", isDefault: true, version: 1 });
    const byId = await api("GET", `/v1/admin/workspaces/${defaultWorkspaceId}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ object: "workspace", id: defaultWorkspaceId, slug: "default", is_default: true });
    const refused = await api("DELETE", "/v1/admin/workspaces/default");
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/default workspace/);
  });

  it("creates, reads by id or slug, lists with pagination, updates and deletes", async () => {
    const created = await api("POST", "/v1/admin/workspaces", {
      name: "Search team",
      slug: "search",
      description: "ranking",
      defaults: { metadata: { team: "search" } },
      security_settings: { block_inline_config: false },
      name_format: "{name} [{slug}]",
      user_api_key_auto_create: false,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: "workspace",
      slug: "search",
      name: "Search team",
      display_name: "Search team [search]",
      defaults: { metadata: { team: "search" }, config_id: null, user_api_key_config: null },
      security_settings: { block_inline_config: false },
      user_api_key_auto_create: false,
      is_default: false,
    });
    expect(created.body.id).toMatch(/^ws_/);
    const id = created.body.id;

    expect((await api("GET", "/v1/admin/workspaces/search")).body.id).toBe(id);
    const generated = await api("POST", "/v1/admin/workspaces", { name: "Ads & Growth" });
    expect(generated.body.slug).toMatch(/^ads-growth-[0-9a-f]{6}$/);

    const duplicate = await api("POST", "/v1/admin/workspaces", { name: "Other", slug: "search" });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toMatchObject({ type: "conflict_error", param: "slug" });

    const first = await api("GET", "/v1/admin/workspaces?limit=1");
    expect(first.body).toMatchObject({ object: "list", has_more: true });
    expect(first.body.data[0].id).toBe(generated.body.id);
    const second = await api("GET", `/v1/admin/workspaces?limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.data[0].id).toBe(id);
    const all = await api("GET", "/v1/admin/workspaces?limit=100");
    expect(all.body.data.map((ws: any) => ws.slug)).toContain("default");
    expect((await api("GET", "/v1/admin/workspaces?cursor=nonsense")).status).toBe(400);

    const updated = await api("PUT", `/v1/admin/workspaces/${id}`, {
      name: "Search",
      security_settings: { block_inline_config: true },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      name: "Search",
      description: "ranking",
      security_settings: { block_inline_config: true },
    });
    const v2 = await api("PUT", `/v2/workspaces/${id}`, { description: null });
    expect(v2.body.description).toBeNull();
    expect((await api("GET", `/v2/workspaces/${id}`)).body.name).toBe("Search");

    expect((await api("DELETE", `/v1/admin/workspaces/${generated.body.id}`)).body).toMatchObject({ deleted: true });
    expect((await api("GET", `/v1/admin/workspaces/${generated.body.id}`)).status).toBe(404);
    expect((await api("DELETE", "/v1/admin/workspaces/ws_unknown")).status).toBe(404);
  });

  it("validates bodies and names the param", async () => {
    const badSlug = await api("POST", "/v1/admin/workspaces", { name: "x", slug: "Not A Slug" });
    expect(badSlug.status).toBe(400);
    expect(badSlug.body.error).toMatchObject({ type: "invalid_request_error", param: "slug" });
    expect((await api("POST", "/v1/admin/workspaces", { slug: "noname" })).body.error.param).toBe("name");
    expect((await api("POST", "/v1/admin/workspaces", { name: "x", colour: "red" })).status).toBe(400);
    const badMeta = await api("POST", "/v1/admin/workspaces", { name: "x", defaults: { metadata: { a: 1 } } });
    expect(badMeta.body.error.param).toBe("defaults.metadata.a");
  });

  it("stores config defaults by id and shows user_api_key_config by slug", async () => {
    const configs = new ResourceStore<Resource>(records(), "CONFIG", "pc");
    const config = await configs.create(organisationId, {
      slug: "fallback-cfg",
      config: { strategy: { mode: "fallback" } },
    });
    const ws = (await api("POST", "/v1/admin/workspaces", { name: "Configured", slug: "configured" })).body;

    const unknown = await api("PUT", `/v2/workspaces/${ws.id}`, { defaults: { user_api_key_config: "nope" } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ param: "defaults.user_api_key_config", code: "config_not_found" });

    const set = await api("PUT", `/v2/workspaces/${ws.id}`, {
      defaults: { user_api_key_config: "fallback-cfg", config_id: config.id },
    });
    expect(set.status).toBe(200);
    expect(set.body.defaults).toMatchObject({ user_api_key_config: "fallback-cfg", config_id: config.id });
    const stored = await workspaceStore(records()).get(organisationId, ws.id);
    expect(stored?.defaults).toMatchObject({ user_api_key_config: config.id, config_id: config.id });
    expect((await workspacesUsingConfig(records(), organisationId, config.id)).map((w) => w.id)).toEqual([ws.id]);

    const cleared = await api("PUT", `/v2/workspaces/${ws.id}`, { defaults: { user_api_key_config: null } });
    expect(cleared.body.defaults).toMatchObject({ user_api_key_config: null, config_id: config.id });
  });

  it("blocks deleting a workspace that still holds shared prompts or partials", async () => {
    const ws = (await api("POST", "/v1/admin/workspaces", { name: "Prompts", slug: "prompts" })).body;
    for (const kind of ["PROMPT", "PROMPT_PARTIAL"]) {
      const store = new ResourceStore<Resource>(records(), kind, kind === "PROMPT" ? "pp" : "ppp");
      const prompt = await store.create(organisationId, { workspaceId: ws.id, shared: true, name: "greeting" });
      const blocked = await api("DELETE", `/v1/admin/workspaces/${ws.id}`);
      expect(blocked.status).toBe(409);
      expect(blocked.body.error.message).toMatch(/shared prompts or partials/);
      await store.update(prompt, { shared: false });
    }
    expect((await api("DELETE", `/v1/admin/workspaces/${ws.id}`)).status).toBe(200);
  });

  it("workspace keys may read their own workspace only and never manage workspaces", async () => {
    const other = (await api("POST", "/v1/admin/workspaces", { name: "Other team", slug: "other-team" })).body;
    const key = await workspaceKey(defaultWorkspaceId, [
      "workspaces.read",
      "workspaces.list",
      "workspaces.create",
      "workspaces.update",
      "workspaces.delete",
      "workspace_users.list",
      "workspace_users.create",
    ]);

    expect((await api("GET", `/v1/admin/workspaces/${defaultWorkspaceId}`, undefined, key)).status).toBe(200);
    const foreign = await api("GET", `/v1/admin/workspaces/${other.id}`, undefined, key);
    // Another workspace answers as an unknown one: 404 (never confirm it exists).
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.type).toBe("not_found_error");
    const listed = await api("GET", "/v1/admin/workspaces?limit=100", undefined, key);
    expect(listed.body.data.map((ws: any) => ws.id)).toEqual([defaultWorkspaceId]);

    for (const [method, path, body] of [
      ["POST", "/v1/admin/workspaces", { name: "Mine" }],
      ["PUT", `/v1/admin/workspaces/${defaultWorkspaceId}`, { name: "Renamed" }],
      ["PUT", `/v2/workspaces/${defaultWorkspaceId}`, { name: "Renamed" }],
      ["DELETE", `/v1/admin/workspaces/${other.id}`, undefined],
      ["POST", `/v1/admin/workspaces/${defaultWorkspaceId}/users`, { user_id: "usr_x", role: "member" }],
    ] as const) {
      const response = await api(method, path, body, key);
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body.error.code).toBe("admin_required");
    }
    expect((await api("GET", `/v1/admin/workspaces/${defaultWorkspaceId}/users`, undefined, key)).status).toBe(200);

    const unscoped = await workspaceKey(defaultWorkspaceId, ["logs.list"]);
    const missing = await api("GET", `/v1/admin/workspaces/${defaultWorkspaceId}`, undefined, unscoped);
    expect(missing.status).toBe(403);
    expect(missing.body.error.code).toBe("missing_scope");
  });
});

describe("workspace members", () => {
  it("adds, lists, updates and removes members, with both membership records", async () => {
    const ws = (await api("POST", "/v1/admin/workspaces", { name: "Members", slug: "members" })).body;
    const alice = await newUser("alice@example.com");
    const bob = await newUser("bob@example.com");

    const added = await api("POST", `/v1/admin/workspaces/${ws.id}/users`, { user_id: alice.id, role: "manager" });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      object: "workspace_member",
      user_id: alice.id,
      role: "manager",
      email: "alice@example.com",
    });
    expect(added.body.api_key).toBeUndefined();
    const bulk = await api("POST", `/v1/admin/workspaces/${ws.id}/users`, { users: [{ id: bob.id, role: "member" }] });
    expect(bulk.body.data[0]).toMatchObject({ user_id: bob.id, role: "member" });

    const duplicate = await api("POST", `/v1/admin/workspaces/${ws.id}/users`, { user_id: alice.id });
    expect(duplicate.status).toBe(409);
    const unknown = await api("POST", `/v1/admin/workspaces/${ws.id}/users`, { user_id: "usr_nobody" });
    expect(unknown.status).toBe(404);
    const badRole = await api("POST", `/v1/admin/workspaces/${ws.id}/users`, { user_id: bob.id, role: "owner" });
    expect(badRole.status).toBe(400);

    const page = await api("GET", `/v1/admin/workspaces/${ws.id}/users?limit=1`);
    expect(page.body.data).toHaveLength(1);
    expect(page.body.has_more).toBe(true);
    const rest = await api("GET", `/v1/admin/workspaces/${ws.id}/users?limit=1&cursor=${page.body.next_cursor}`);
    expect([page.body.data[0].user_id, rest.body.data[0].user_id].sort()).toEqual([alice.id, bob.id].sort());

    expect(await getMembership(records(), ws.id, alice.id)).toMatchObject({ role: "manager", organisationId });
    expect((await listUserWorkspaces(records(), alice.id)).map((m) => m.workspaceId)).toEqual([ws.id]);

    const promoted = await api("PUT", `/v1/admin/workspaces/${ws.id}/users/${bob.id}`, { role: "manager" });
    expect(promoted.body.role).toBe("manager");
    expect((await listUserWorkspaces(records(), bob.id))[0]?.role).toBe("manager");
    expect((await api("GET", `/v1/admin/workspaces/${ws.id}/users/${bob.id}`)).body.role).toBe("manager");

    expect((await api("DELETE", `/v1/admin/workspaces/${ws.id}/users/${bob.id}`)).status).toBe(200);
    expect(await getMembership(records(), ws.id, bob.id)).toBeUndefined();
    expect(await listUserWorkspaces(records(), bob.id)).toEqual([]);
    expect((await api("GET", `/v1/admin/workspaces/${ws.id}/users/${bob.id}`)).status).toBe(404);

    // Deleting the workspace removes its memberships.
    expect((await api("DELETE", `/v1/admin/workspaces/${ws.id}`)).status).toBe(200);
    expect(await listUserWorkspaces(records(), alice.id)).toEqual([]);
  });

  it("creates a workspace user key when user_api_key_auto_create applies", async () => {
    const ws = (await api("POST", "/v1/admin/workspaces", { name: "Auto keys", user_api_key_auto_create: true })).body;
    const carol = await newUser("carol@example.com");
    const added = await api("POST", `/v1/admin/workspaces/${ws.id}/users`, { user_id: carol.id });
    expect(added.body.api_key).toMatchObject({ workspace_id: ws.id });
    expect(added.body.api_key.key).toMatch(/^gk-/);
    const logs = await fetch(`${gateway.url}/v1/logs`, { headers: { "x-gateway-api-key": added.body.api_key.key } });
    expect(logs.status).toBe(200);
    // The audit entry names the key, never its secret.
    const audit = await api("GET", `/v1/audit-logs?resource_type=workspace_member&resource_id=${ws.id}/${carol.id}`);
    expect(audit.body.data[0].after.api_key_id).toBe(added.body.api_key.id);
    expect(JSON.stringify(audit.body)).not.toContain(added.body.api_key.key);
  });
});
