import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_SCOPES } from "../../core/auth/scope-list.ts";
import { getOrganisation, updateOrganisation } from "../../core/control/organisation/store.ts";
import { call, createKey, seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/** API keys through HTTP: create by type, list, get, update, rotate, revoke, batch lookup, validation and roles. */

let gateway: TestGateway;
let admin: string;
let wsA: { id: string };
let wsB: { id: string };
let managerA: { id: string; key: string };
let memberA: { id: string; key: string };
let serviceA: { id: string; key: string };

beforeAll(async () => {
  gateway = await startTestGateway();
  admin = gateway.adminKey;
  wsA = await seedWorkspace(gateway, "Team A");
  wsB = await seedWorkspace(gateway, "Team B");
  const manager = await seedUser(gateway, "manager@example.com");
  const member = await seedUser(gateway, "member@example.com");
  await seedMember(gateway, wsA.id, manager.id, "manager");
  await seedMember(gateway, wsA.id, member.id, "member");
  managerA = await createKey(gateway, admin, "workspace", "user", {
    name: "mgr",
    workspace_id: wsA.id,
    user_id: manager.id,
    scopes: ["*"],
  });
  memberA = await createKey(gateway, admin, "workspace", "user", {
    name: "mbr",
    workspace_id: wsA.id,
    user_id: member.id,
    scopes: [...ALL_SCOPES],
  });
  serviceA = await createKey(gateway, admin, "workspace", "service", {
    name: "svc",
    workspace_id: wsA.id,
    scopes: ["api_keys.create", "api_keys.list", "api_keys.read", "logs.list"],
  });
});

afterAll(async () => {
  await gateway?.close();
});

describe("API keys", () => {
  it("creates an organisation service key whose secret is shown once and stored only hashed", async () => {
    const created = await call(gateway, admin, "POST", "/v1/api-keys/organisation/service", {
      name: "ci",
      scopes: ["logs.list", "api_keys.list"],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: "api-key",
      type: "organisation-service",
      name: "ci",
      status: "active",
      scopes: ["logs.list", "api_keys.list"],
    });
    const secret = created.body.key as string;
    expect(secret).toMatch(/^gk-/);
    expect(created.body.id).toMatch(/^key_/);

    const fetched = await call(gateway, admin, "GET", `/v1/api-keys/${created.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.key).not.toBe(secret);
    expect(fetched.body.key).toContain("...");
    expect(fetched.text).not.toContain(secret);

    // The new key works, within its scopes.
    expect((await call(gateway, secret, "GET", "/v1/api-keys")).status).toBe(200);
    const denied = await call(gateway, secret, "POST", "/v1/api-keys/organisation/service", { name: "x", scopes: [] });
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain("api_keys.create");

    const dir = gateway.gateway.services.settings.GATEWAY_DATA_DIR;
    for (const file of readdirSync(dir).filter((name) => name.startsWith("gateway.db"))) {
      expect(readFileSync(join(dir, file)).includes(secret)).toBe(false);
    }
  });

  it("accepts the portkey-ai SDK's generic /api-keys/{type}/{sub-type} and a body-typed create", async () => {
    const generic = await call(gateway, admin, "POST", "/v1/api-keys/workspace/service", {
      name: "svc2",
      workspace_id: wsA.id,
      scopes: ["logs.list"],
      defaults: { config_id: null, metadata: null },
    });
    expect(generic.status).toBe(201);
    expect(generic.body).toMatchObject({ workspace_id: wsA.id, type: "workspace-service" });
    const typed = await call(gateway, admin, "POST", "/v1/api-keys", {
      type: "workspace",
      "sub-type": "service",
      name: "svc3",
      workspace_id: wsB.id,
      scopes: [],
    });
    expect(typed.status).toBe(201);
    expect(
      (await call(gateway, admin, "POST", "/v1/api-keys/organisation/user", { name: "x", scopes: [] })).status,
    ).toBe(400);
    expect((await call(gateway, admin, "POST", "/v1/api-keys/team/service", { name: "x", scopes: [] })).status).toBe(
      400,
    );
  });

  it("validates scopes, rotation settings and required fields (400)", async () => {
    const badScope = await call(gateway, admin, "POST", "/v1/api-keys/organisation/service", {
      name: "x",
      scopes: ["logs.list", "logs.destroy"],
    });
    expect(badScope.status).toBe(400);
    expect(badScope.body.error.message).toContain("logs.destroy");
    expect(badScope.body.error.param).toBe("scopes[1]");

    const both = await call(gateway, admin, "POST", "/v1/api-keys/organisation/service", {
      name: "x",
      scopes: [],
      rotation_period: "weekly",
      rotation_period_days: 7,
    });
    expect(both.status).toBe(400);
    for (const value of [0, 366, "yearly", 1.5]) {
      const answer = await call(gateway, admin, "POST", "/v1/api-keys/organisation/service", {
        name: "x",
        scopes: [],
        rotation_period_days: value,
      });
      expect(answer.status, String(value)).toBe(400);
    }
    expect(
      (await call(gateway, admin, "POST", "/v1/api-keys/workspace/service", { name: "x", scopes: [] })).status,
    ).toBe(400);
    expect(
      (
        await call(gateway, admin, "POST", "/v1/api-keys/workspace/user", {
          name: "x",
          workspace_id: wsA.id,
          scopes: [],
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call(gateway, admin, "POST", "/v1/api-keys/workspace/service", {
          name: "x",
          workspace_id: "ws_nope",
          scopes: [],
        })
      ).status,
    ).toBe(404);
    expect((await call(gateway, admin, "POST", "/v1/api-keys/organisation/service", { scopes: [] })).status).toBe(400);

    const weekly = await call(gateway, admin, "POST", "/v1/api-keys/organisation/service", {
      name: "weekly",
      scopes: [],
      rotation_period: "weekly",
    });
    expect(weekly.status).toBe(201);
    expect(weekly.body.rotation_period_days).toBe(7);
    const next = Date.parse(weekly.body.next_rotation_at);
    expect(Math.abs(next - (Date.now() + 7 * 86_400_000))).toBeLessThan(60_000);
    const monthly = await call(gateway, admin, "POST", "/v1/api-keys/organisation/service", {
      name: "monthly",
      scopes: [],
      rotation_period: "monthly",
    });
    expect(monthly.body.rotation_period_days).toBe(30);
  });

  it("refuses a hand-set next_rotation_at when the organisation enforces rotation", async () => {
    const { records } = gateway.gateway.services.stores;
    const organisationId = gateway.gateway.bootstrap.organisationId;
    const manual = new Date(Math.floor(Date.now() / 1000 + 3 * 86_400) * 1000).toISOString();
    const free = await call(gateway, admin, "POST", "/v1/api-keys/workspace/service", {
      name: "manual",
      workspace_id: wsA.id,
      scopes: [],
      next_rotation_at: manual,
    });
    expect(free.status).toBe(201);
    expect(free.body.next_rotation_at).toBe(manual);

    const organisation = await getOrganisation(records, organisationId);
    await updateOrganisation(records, organisation, {
      settings: { ...organisation.settings, user_api_key_rotation_period: 14 },
    });
    gateway.gateway.services.orgSettings.forget(organisationId);
    try {
      const user = await seedUser(gateway, "rotating@example.com");
      await seedMember(gateway, wsA.id, user.id, "member");
      const refused = await call(gateway, admin, "POST", "/v1/api-keys/workspace/user", {
        name: "u",
        workspace_id: wsA.id,
        user_id: user.id,
        scopes: [],
        next_rotation_at: manual,
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.param).toBe("next_rotation_at");
      const enforced = await call(gateway, admin, "POST", "/v1/api-keys/workspace/user", {
        name: "u",
        workspace_id: wsA.id,
        user_id: user.id,
        scopes: [],
      });
      expect(enforced.status).toBe(201);
      expect(enforced.body.rotation_period_days).toBe(14);
      expect(enforced.body.next_rotation_at).not.toBeNull();
      expect(
        (await call(gateway, admin, "PUT", `/v1/api-keys/${enforced.body.id}`, { next_rotation_at: manual })).status,
      ).toBe(400);
    } finally {
      const current = await getOrganisation(records, organisationId);
      await updateOrganisation(records, current, {
        settings: { ...current.settings, user_api_key_rotation_period: null },
      });
      gateway.gateway.services.orgSettings.forget(organisationId);
    }
  });

  it("lets managers and workspace service keys create keys only in their own workspace; members cannot", async () => {
    const byManager = await call(gateway, managerA.key, "POST", "/v1/api-keys/workspace/service", {
      name: "m",
      workspace_id: wsA.id,
      scopes: ["logs.list"],
    });
    expect(byManager.status).toBe(201);
    const byManagerDefault = await call(gateway, managerA.key, "POST", "/v1/api-keys/workspace/service", {
      name: "m2",
      scopes: [],
    });
    expect(byManagerDefault.status).toBe(201);
    expect(byManagerDefault.body.workspace_id).toBe(wsA.id);
    expect(
      (
        await call(gateway, managerA.key, "POST", "/v1/api-keys/workspace/service", {
          name: "m",
          workspace_id: wsB.id,
          scopes: [],
        })
      ).status,
    ).toBe(403);
    expect(
      (await call(gateway, managerA.key, "POST", "/v1/api-keys/organisation/service", { name: "m", scopes: [] }))
        .status,
    ).toBe(403);

    const byService = await call(gateway, serviceA.key, "POST", "/v1/api-keys/workspace/service", {
      name: "s",
      workspace_id: wsA.id,
      scopes: ["logs.list"],
    });
    expect(byService.status).toBe(201);
    // A key cannot grant what it does not hold.
    const escalation = await call(gateway, serviceA.key, "POST", "/v1/api-keys/workspace/service", {
      name: "s",
      workspace_id: wsA.id,
      scopes: ["configs.delete"],
    });
    expect(escalation.status).toBe(403);

    const byMember = await call(gateway, memberA.key, "POST", "/v1/api-keys/workspace/service", {
      name: "x",
      workspace_id: wsA.id,
      scopes: [],
    });
    expect(byMember.status).toBe(403);
  });

  it("lists with pagination and workspace filter; workspace keys see only their workspace", async () => {
    const first = await call(gateway, admin, "GET", "/v1/api-keys?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.has_more).toBe(true);
    const second = await call(gateway, admin, "GET", `/v1/api-keys?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    expect(second.body.data[0].id).not.toBe(first.body.data[1].id);

    const onlyB = await call(gateway, admin, "GET", `/v1/api-keys?workspace_id=${wsB.id}&limit=100`);
    expect(onlyB.body.data.length).toBeGreaterThan(0);
    expect(onlyB.body.data.every((key: any) => key.workspace_id === wsB.id)).toBe(true);

    const asA = await call(gateway, serviceA.key, "GET", "/v1/api-keys?limit=100");
    expect(asA.status).toBe(200);
    expect(asA.body.data.every((key: any) => key.workspace_id === wsA.id)).toBe(true);
    expect(asA.text).not.toContain(wsB.id);
    expect((await call(gateway, serviceA.key, "GET", `/v1/api-keys?workspace_id=${wsB.id}`)).status).toBe(403);
    expect((await call(gateway, admin, "GET", "/v1/api-keys?cursor=@@")).status).toBe(400);
  });

  it("looks keys up in batch (v2 path and v1 ?ids=)", async () => {
    const other = await createKey(gateway, admin, "workspace", "service", {
      name: "b",
      workspace_id: wsB.id,
      scopes: [],
    });
    const ids = [serviceA.id, other.id, "key_doesnotexist"].join(",");
    const batch = await call(gateway, admin, "GET", `/v2/api-keys?ids=${ids}`);
    expect(batch.status).toBe(200);
    expect(batch.body.data.map((key: any) => key.id).sort()).toEqual([serviceA.id, other.id].sort());
    const v1 = await call(gateway, admin, "GET", `/v1/api-keys?ids=${ids}`);
    expect(v1.body.data).toHaveLength(2);
    // A workspace key only sees its own workspace's keys.
    const scoped = await call(gateway, serviceA.key, "GET", `/v2/api-keys?ids=${ids}`);
    expect(scoped.body.data.map((key: any) => key.id)).toEqual([serviceA.id]);
    expect((await call(gateway, admin, "GET", "/v2/api-keys?ids=")).status).toBe(400);
  });

  it("updates name, scopes, expiry and rotation; scope changes apply at once", async () => {
    const target = await createKey(gateway, admin, "workspace", "service", {
      name: "upd",
      workspace_id: wsA.id,
      scopes: ["logs.list"],
    });
    expect((await call(gateway, target.key, "GET", "/v1/api-keys")).status).toBe(403);
    const updated = await call(gateway, admin, "PUT", `/v1/api-keys/${target.id}`, {
      name: "renamed",
      scopes: ["api_keys.list"],
      rotation_period_days: 90,
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: "renamed", scopes: ["api_keys.list"], rotation_period_days: 90 });
    expect(updated.body.expires_at).not.toBeNull();
    expect((await call(gateway, target.key, "GET", "/v1/api-keys")).status).toBe(200);
    expect((await call(gateway, admin, "PUT", `/v1/api-keys/${target.id}`, { scopes: ["nope.nope"] })).status).toBe(
      400,
    );
    expect(
      (
        await call(gateway, admin, "PUT", `/v1/api-keys/${target.id}`, {
          rotation_period: "weekly",
          rotation_period_days: 7,
        })
      ).status,
    ).toBe(400);
    expect((await call(gateway, memberA.key, "PUT", `/v1/api-keys/${target.id}`, { name: "x" })).status).toBe(403);
    expect((await call(gateway, managerA.key, "PUT", `/v1/api-keys/${target.id}`, { name: "by manager" })).status).toBe(
      200,
    );
  });

  it("rotates: the new secret once, the old one valid for an overlap", async () => {
    const target = await createKey(gateway, admin, "workspace", "service", {
      name: "rot",
      workspace_id: wsA.id,
      scopes: ["api_keys.list"],
      rotation_period_days: 30,
    });
    const rotated = await call(gateway, admin, "POST", `/v1/api-keys/${target.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.key).toMatch(/^gk-/);
    expect(rotated.body.key).not.toBe(target.key);
    expect(rotated.body.id).toBe(target.id);
    expect(rotated.body.last_rotated_at).not.toBeNull();
    const overlapEnds = Date.parse(rotated.body.previous_key_expires_at);
    expect(overlapEnds).toBeGreaterThan(Date.now());
    expect(overlapEnds).toBeLessThan(Date.now() + 15 * 60_000);
    expect((await call(gateway, rotated.body.key, "GET", "/v1/api-keys")).status).toBe(200);
    expect((await call(gateway, target.key, "GET", "/v1/api-keys")).status).toBe(200);
    const after = await call(gateway, admin, "GET", `/v1/api-keys/${target.id}`);
    expect(after.text).not.toContain(rotated.body.key);
  });

  it("revokes on DELETE: the key stops working at once", async () => {
    const target = await createKey(gateway, admin, "workspace", "service", {
      name: "rev",
      workspace_id: wsA.id,
      scopes: ["api_keys.list"],
    });
    expect((await call(gateway, target.key, "GET", "/v1/api-keys")).status).toBe(200);
    const rotated = await call(gateway, admin, "POST", `/v1/api-keys/${target.id}/rotate`);
    const revoked = await call(gateway, admin, "DELETE", `/v1/api-keys/${target.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: target.id, deleted: true });
    expect((await call(gateway, target.key, "GET", "/v1/api-keys")).status).toBe(401);
    expect((await call(gateway, rotated.body.key, "GET", "/v1/api-keys")).status).toBe(401);
    expect((await call(gateway, admin, "GET", `/v1/api-keys/${target.id}`)).body.status).toBe("revoked");
    expect((await call(gateway, admin, "POST", `/v1/api-keys/${target.id}/rotate`)).status).toBe(400);
  });

  it("hides other workspaces' keys (404) and writes audit records", async () => {
    const other = await createKey(gateway, admin, "workspace", "service", {
      name: "hidden",
      workspace_id: wsB.id,
      scopes: [],
    });
    for (const [method, path] of [
      ["GET", `/v1/api-keys/${other.id}`],
      ["PUT", `/v1/api-keys/${other.id}`],
      ["DELETE", `/v1/api-keys/${other.id}`],
      ["POST", `/v1/api-keys/${other.id}/rotate`],
    ] as const) {
      const answer = await call(gateway, managerA.key, method, path, method === "PUT" ? { name: "x" } : undefined);
      expect(answer.status, `${method} ${path}`).toBe(404);
    }
    expect((await call(gateway, admin, "GET", `/v1/api-keys/${other.id}`)).body.status).toBe("active");
    const audit = await gateway.gateway.services.stores.records.query({
      partition: `ORG#${gateway.gateway.bootstrap.organisationId}#AUDIT`,
      index: "gsi1",
      limit: 1000,
    });
    const entries = audit.items.filter((item) => item.resourceType === "api_key");
    expect(entries.some((item) => item.action === "create" && item.resourceId === other.id)).toBe(true);
    expect(entries.some((item) => item.action === "rotate")).toBe(true);
    expect(entries.some((item) => item.action === "delete")).toBe(true);
    expect(JSON.stringify(entries)).not.toMatch(/gk-[A-Za-z0-9_-]{20,}/);
  });

  it("stops an expiring key at its expires_at even while it is cached", async () => {
    // Expiry has second resolution: this key expires 1 to 2 s from now.
    const expiresAt = Math.ceil(Date.now() / 1000) + 1;
    const target = await createKey(gateway, admin, "workspace", "service", {
      name: "short-lived",
      workspace_id: wsA.id,
      scopes: ["api_keys.list"],
      expires_at: expiresAt,
    });
    // Used just before expiry: authenticated and now cached (the cache lasts far longer than the key).
    expect((await call(gateway, target.key, "GET", "/v1/api-keys")).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, expiresAt * 1000 - Date.now() + 50));
    const after = await call(gateway, target.key, "GET", "/v1/api-keys");
    expect(after.status).toBe(401);
  });

  it("refuses dates no date can show (expires_at: 1e308) everywhere, and keeps reads working", async () => {
    const bad: Array<[string, unknown]> = [
      ["expires_at", 1e308],
      ["expires_at", "+275760-09-13T00:00:00.000Z"],
      ["expires_at", 253_402_300_800],
      ["expires_at", ""],
      ["next_rotation_at", 1e308],
      ["next_rotation_at", "10000-01-01T00:00:00Z"],
    ];
    const target = await createKey(gateway, admin, "workspace", "service", {
      name: "dates",
      workspace_id: wsA.id,
      scopes: [],
    });
    for (const [field, value] of bad) {
      const created = await call(gateway, admin, "POST", "/v1/api-keys/workspace/service", {
        name: "bad date",
        workspace_id: wsA.id,
        scopes: [],
        [field]: value,
      });
      expect({ field, value, status: created.status, param: created.body.error?.param }).toEqual({
        field,
        value,
        status: 400,
        param: field,
      });
      const updated = await call(gateway, admin, "PUT", `/v1/api-keys/${target.id}`, { [field]: value });
      expect(updated.status, `${field}: ${value} on update`).toBe(400);
    }
    // The latest date there is still works.
    const latest = await call(gateway, admin, "PUT", `/v1/api-keys/${target.id}`, {
      expires_at: "9999-12-31T23:59:59Z",
    });
    expect(latest.body.expires_at).toBe("9999-12-31T23:59:59.000Z");
    expect((await call(gateway, admin, "GET", `/v1/api-keys/${target.id}`)).status).toBe(200);
    expect((await call(gateway, admin, "GET", "/v1/api-keys?limit=100")).status).toBe(200);
  });
});
