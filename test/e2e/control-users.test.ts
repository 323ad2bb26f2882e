import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { getMembership } from "../../core/control/workspaces/members.ts";
import { inviteStore } from "../../core/control/users/store.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/** Users and the invite lifecycle through HTTP on the local platform. */

let gateway: TestGateway;
let organisationId: string;
let defaultWorkspaceId: string;

beforeAll(async () => {
  gateway = await startTestGateway({ GATEWAY_PUBLIC_URL: "https://gateway.example.com" });
  ({ organisationId, defaultWorkspaceId } = gateway.gateway.bootstrap);
});

afterAll(async () => {
  await gateway?.close();
});

const records = () => gateway.gateway.services.stores.records;

async function api(
  method: string,
  path: string,
  body?: unknown,
  key: string | null = gateway.adminKey,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      ...(key ? { "x-gateway-api-key": key } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const accept = (body: unknown) => api("POST", "/v1/admin/users/invites/accept", body, null);

describe("invites", () => {
  it("invite, accept once, and the user exists with its memberships; the token is stored only as a hash", async () => {
    const ws = (await api("POST", "/v1/admin/workspaces", { name: "Research", slug: "research" })).body;
    const created = await api("POST", "/v1/admin/users/invites", {
      email: "Dana@Example.com",
      role: "admin",
      workspaces: [{ id: "research", role: "manager" }, { id: defaultWorkspaceId }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: "invite",
      email: "dana@example.com",
      role: "admin",
      status: "pending",
      workspaces: [
        { id: ws.id, role: "manager" },
        { id: defaultWorkspaceId, role: "member" },
      ],
    });
    const { token, id } = created.body;
    expect(created.body.accept_url).toBe(`https://gateway.example.com/v1/admin/users/invites/accept?token=${token}`);

    const again = await api("POST", "/v1/admin/users/invites", { email: "dana@example.com" });
    expect(again.status).toBe(409);
    const badWs = await api("POST", "/v1/admin/users/invites", {
      email: "x@example.com",
      workspaces: [{ id: "nope" }],
    });
    expect(badWs.body.error).toMatchObject({ param: "workspaces[0].id", code: "workspace_not_found" });
    expect((await api("POST", "/v1/admin/users/invites", { email: "not-an-email" })).body.error.param).toBe("email");

    const fetched = await api("GET", `/v1/admin/users/invites/${id}`);
    expect(fetched.body).toMatchObject({ id, status: "pending" });
    expect(fetched.body.token).toBeUndefined();
    const listed = await api("GET", "/v1/admin/users/invites?status=pending");
    expect(listed.body.data.map((invite: any) => invite.id)).toContain(id);

    expect((await accept({ token: "inv-wrong-token-value" })).status).toBe(404);
    const accepted = await accept({ token, name: "Dana" });
    expect(accepted.status).toBe(201);
    expect(accepted.body).toMatchObject({
      object: "user",
      email: "dana@example.com",
      role: "admin",
      name: "Dana",
      invite_id: id,
    });
    const userId = accepted.body.id;
    expect(await getMembership(records(), ws.id, userId)).toMatchObject({ role: "manager" });
    expect(await getMembership(records(), defaultWorkspaceId, userId)).toMatchObject({ role: "member" });

    const reused = await accept({ token });
    expect(reused.status).toBe(410);
    expect(reused.body.error.code).toBe("invite_accepted");
    expect((await api("GET", `/v1/admin/users/invites/${id}`)).body).toMatchObject({
      status: "accepted",
      accepted_user_id: userId,
    });

    const user = await api("GET", `/v1/admin/users/${userId}`);
    expect(user.body).toMatchObject({ id: userId, email: "dana@example.com", role: "admin" });
    expect(user.body.workspaces).toHaveLength(2);
    // Emails are unique per organisation.
    expect((await api("POST", "/v1/admin/users/invites", { email: "DANA@example.com" })).status).toBe(409);

    const dir = gateway.gateway.services.settings.GATEWAY_DATA_DIR;
    for (const file of readdirSync(dir).filter((name) => name.startsWith("gateway.db"))) {
      expect(readFileSync(join(dir, file)).includes(token)).toBe(false);
    }
    // The audit trail has the invite and the acceptance, without the token.
    const audit = await api("GET", `/v1/audit-logs?resource_id=${id}`);
    expect(audit.body.data.map((entry: any) => entry.action)).toEqual(["create"]);
    const acceptance = await api("GET", `/v1/audit-logs?action=accept_invite&actor_user_id=${userId}`);
    expect(acceptance.body.data).toHaveLength(1);
    expect(JSON.stringify(acceptance.body)).not.toContain(token);
  });

  it("resend issues a new token and a new expiry; the old token stops working", async () => {
    const created = (await api("POST", "/v1/admin/users/invites", { email: "erin@example.com" })).body;
    const resent = await api("POST", `/v1/admin/users/invites/${created.id}/resend`);
    expect(resent.status).toBe(200);
    expect(resent.body.token).not.toBe(created.token);
    expect(Date.parse(resent.body.expires_at)).toBeGreaterThanOrEqual(Date.parse(created.expires_at));
    expect((await accept({ token: created.token })).status).toBe(404);
    // The token may come in the query too (the accept URL).
    const response = await fetch(resent.body.accept_url.replace("https://gateway.example.com", gateway.url), {
      method: "POST",
    });
    expect(response.status).toBe(201);
    expect((await api("POST", `/v1/admin/users/invites/${created.id}/resend`)).status).toBe(409);
  });

  it("expired and revoked invites are refused; an expired invite frees its email", async () => {
    const created = (await api("POST", "/v1/admin/users/invites", { email: "frank@example.com" })).body;
    const store = inviteStore(records());
    const invite = (await store.get(organisationId, created.id))!;
    await store.update(invite, { expiresAt: Math.floor(Date.now() / 1000) - 1 });
    const expired = await accept({ token: created.token });
    expect(expired.status).toBe(410);
    expect(expired.body.error.code).toBe("invite_expired");
    expect((await api("GET", "/v1/admin/users/invites?status=expired")).body.data.map((i: any) => i.id)).toContain(
      created.id,
    );

    const fresh = await api("POST", "/v1/admin/users/invites", { email: "frank@example.com" });
    expect(fresh.status).toBe(201);
    const revoked = await api("DELETE", `/v1/admin/users/invites/${fresh.body.id}`);
    expect(revoked.body).toMatchObject({ deleted: true, status: "revoked" });
    const refused = await accept({ token: fresh.body.token });
    expect(refused.status).toBe(410);
    expect(refused.body.error.code).toBe("invite_revoked");
    expect((await api("GET", "/v1/admin/users/invites/inv_unknown")).status).toBe(404);
    expect((await accept({})).body.error.param).toBe("token");
    const malformed = await fetch(`${gateway.url}/v1/admin/users/invites/accept`, { method: "POST", body: "{nope" });
    expect(malformed.status).toBe(400);
  });
});

describe("users", () => {
  it("lists, reads, changes roles and deletes users; workspace keys get 403", async () => {
    const invite = (
      await api("POST", "/v1/admin/users/invites", { email: "gina@example.com", workspaces: [{ id: "default" }] })
    ).body;
    const user = (await accept({ token: invite.token, first_name: "Gina", last_name: "Lopez" })).body;
    expect(user.name).toBe("Gina Lopez");

    const list = await api("GET", "/v1/admin/users?limit=1");
    expect(list.body).toMatchObject({ object: "list", has_more: true });
    expect(list.body.data[0].id).toBe(user.id);
    expect((await api("GET", "/v1/admin/users?role=admin")).body.data.every((u: any) => u.role === "admin")).toBe(true);
    expect((await api("GET", "/v1/admin/users/gina@example.com")).body.id).toBe(user.id);

    const promoted = await api("PUT", `/v1/admin/users/${user.id}`, { role: "admin" });
    expect(promoted.body.role).toBe("admin");
    expect((await api("PUT", `/v1/admin/users/${user.id}`, { role: "superuser" })).body.error.param).toBe("role");
    expect((await api("PUT", "/v1/admin/users/usr_missing", { role: "admin" })).status).toBe(404);

    const key = await createApiKey(records(), {
      organisationId,
      workspaceId: defaultWorkspaceId,
      name: "ws",
      keyType: "workspace",
      keySubType: "service",
      scopes: ["users.list", "users.delete", "invites.create", "invites.list"],
    });
    for (const [method, path, body] of [
      ["GET", "/v1/admin/users", undefined],
      ["DELETE", `/v1/admin/users/${user.id}`, undefined],
      ["POST", "/v1/admin/users/invites", { email: "h@example.com" }],
      ["GET", "/v1/admin/users/invites", undefined],
    ] as const) {
      expect((await api(method, path, body, key.secret)).status, `${method} ${path}`).toBe(403);
    }

    // The user's own key works until the user is deleted, then stops at once.
    const userKey = await createApiKey(records(), {
      organisationId,
      workspaceId: defaultWorkspaceId,
      name: "gina's key",
      keyType: "workspace",
      keySubType: "user",
      userId: user.id,
      scopes: ["logs.list"],
    });
    expect((await api("GET", "/v1/logs?limit=1", undefined, userKey.secret)).status).toBe(200);
    const deleted = await api("DELETE", `/v1/admin/users/${user.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.revoked_api_keys).toEqual([userKey.id]);
    expect((await api("GET", "/v1/logs?limit=1", undefined, userKey.secret)).status).toBe(401);
    expect((await api("GET", `/v1/admin/users/${user.id}`)).status).toBe(404);
    expect(await getMembership(records(), defaultWorkspaceId, user.id)).toBeUndefined();
    // The email is free again.
    expect((await api("POST", "/v1/admin/users/invites", { email: "gina@example.com" })).status).toBe(201);
  });
});
