import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { type TestGateway, apiCaller, startTestGateway } from "../helpers/gateway.ts";

/**
 * SCIM 2.0 provisioning with requests shaped as Okta's and Entra ID's provisioning agents send them (Okta:
 * developer.okta.com/docs/api/openapi/okta-scim/guides/scim-20; Entra ID: learn.microsoft.com "Tutorial: Develop
 * and plan provisioning for a SCIM endpoint"), checked through the gateway's admin API.
 */

let gateway: TestGateway;
let scimToken: string;
let tokenId: string;
const api = apiCaller(() => gateway);

beforeAll(async () => {
  gateway = await startTestGateway();
  const created = await api("POST", "/v1/admin/scim/tokens", { name: "Okta" });
  expect(created.status).toBe(201);
  scimToken = created.body.token;
  tokenId = created.body.id;
});

afterAll(async () => {
  await gateway?.close();
});

async function scim(method: string, path: string, body?: unknown, token = scimToken) {
  const response = await fetch(`${gateway.url}/scim/v2${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      accept: "application/scim+json",
      ...(body === undefined ? {} : { "content-type": "application/scim+json; charset=utf-8" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    body: text ? JSON.parse(text) : undefined,
  };
}

const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";

const oktaUser = (email: string, externalId: string) => ({
  schemas: [USER],
  userName: email,
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [{ primary: true, value: email, type: "work" }],
  displayName: "Ada Lovelace",
  locale: "en-US",
  externalId,
  groups: [],
  password: "ignored-by-the-gateway",
  active: true,
});

async function workspacesOf(userId: string): Promise<Array<{ id: string; role: string }>> {
  const user = await api("GET", `/v1/admin/users/${userId}`);
  expect(user.status).toBe(200);
  return user.body.workspaces;
}

describe("tokens", () => {
  it("shows the secret once, lists without it, refuses API keys and revoked tokens", async () => {
    const listed = await api("GET", "/v1/admin/scim/tokens");
    expect(listed.body.data.map((token: any) => token.id)).toContain(tokenId);
    expect(JSON.stringify(listed.body)).not.toContain(scimToken);

    const apiKey = await scim("GET", "/Users", undefined, gateway.adminKey);
    expect(apiKey.status).toBe(401);
    expect(apiKey.type).toContain("application/scim+json");
    expect(apiKey.body).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "401" });
    const viaHeader = await fetch(`${gateway.url}/scim/v2/Users`, {
      headers: { "x-gateway-api-key": gateway.adminKey },
    });
    expect(viaHeader.status).toBe(401);

    const extra = (await api("POST", "/v1/admin/scim/tokens", { name: "to revoke" })).body;
    expect((await scim("GET", "/Users", undefined, extra.token)).status).toBe(200);
    expect((await api("DELETE", `/v1/admin/scim/tokens/${extra.id}`)).status).toBe(200);
    expect((await scim("GET", "/Users", undefined, extra.token)).status).toBe(401);

    const audit = await api("GET", "/v1/audit-logs?resource_type=scim_token&limit=100");
    expect(audit.body.data.map((entry: any) => entry.action)).toEqual(expect.arrayContaining(["create", "revoke"]));
    expect(JSON.stringify(audit.body)).not.toContain(extra.token);
  });
});

describe("Okta", () => {
  it("finds nobody, creates the user, finds them by userName, deactivates and reactivates them", async () => {
    const none = await scim(
      "GET",
      `/Users?filter=${encodeURIComponent('userName eq "ada@example.com"')}&startIndex=1&count=100`,
    );
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });

    const created = await scim("POST", "/Users", oktaUser("ada@example.com", "00u1okta"));
    expect(created.status).toBe(201);
    expect(created.type).toContain("application/scim+json");
    expect(created.body).toMatchObject({
      schemas: [USER],
      userName: "ada@example.com",
      externalId: "00u1okta",
      active: true,
      name: { givenName: "Ada", familyName: "Lovelace" },
      meta: { resourceType: "User" },
    });
    const id = created.body.id;
    expect(JSON.stringify(created.body)).not.toContain("ignored-by-the-gateway");

    const duplicate = await scim("POST", "/Users", oktaUser("ADA@example.com", "00u1okta"));
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.scimType).toBe("uniqueness");

    const found = await scim("GET", `/Users?filter=${encodeURIComponent('userName eq "Ada@Example.com"')}`);
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0].id).toBe(id);
    const byExternal = await scim("GET", `/Users?filter=${encodeURIComponent('externalId eq "00u1okta"')}`);
    expect(byExternal.body.Resources.map((user: any) => user.id)).toEqual([id]);
    const bad = await scim("GET", `/Users?filter=${encodeURIComponent("userName eq")}`);
    expect(bad.status).toBe(400);
    expect(bad.body.scimType).toBe("invalidFilter");

    // The gateway user exists with the organisation role member.
    const user = await api("GET", `/v1/admin/users/${id}`);
    expect(user.body).toMatchObject({ email: "ada@example.com", role: "member", first_name: "Ada" });

    // Okta pushes a group with the user, then an admin maps it to a workspace.
    const ws = (await api("POST", "/v1/admin/workspaces", { name: "Okta WS", slug: "okta-ws" })).body;
    const group = await scim("POST", "/Groups", { schemas: [GROUP], displayName: "Okta Engineers", members: [] });
    expect(group.status).toBe(201);
    const mapping = await api("POST", "/v1/admin/scim/group-mappings", {
      group: "Okta Engineers",
      workspace_id: ws.slug,
      role: "manager",
    });
    expect(mapping.status).toBe(201);
    expect(mapping.body).toMatchObject({ group_id: group.body.id, workspace_id: ws.id, role: "manager" });
    const added = await scim("PATCH", `/Groups/${group.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "add", path: "members", value: [{ value: id, display: "ada@example.com" }] }],
    });
    expect(added.status).toBe(200);
    expect(await workspacesOf(id)).toEqual([{ id: ws.id, role: "manager" }]);

    // Deactivation (Okta: path-less replace) takes every membership and key away.
    const key = await api("POST", "/v1/api-keys/workspace/user", {
      name: "ada",
      workspace_id: ws.id,
      user_id: id,
      scopes: ["models.list"],
    });
    expect(key.status).toBe(201);
    const before = await fetch(`${gateway.url}/v1/models`, { headers: { "x-gateway-api-key": key.body.key } });
    expect(before.status).toBe(200);
    const deactivated = await scim("PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", value: { active: false } }],
    });
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.active).toBe(false);
    expect(await workspacesOf(id)).toEqual([]);
    const keyed = await fetch(`${gateway.url}/v1/models`, { headers: { "x-gateway-api-key": key.body.key } });
    expect(keyed.status).toBe(401);

    // Reactivation restores the mapped membership; removing them from the group takes it away.
    await scim("PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", value: { active: true } }],
    });
    expect(await workspacesOf(id)).toEqual([{ id: ws.id, role: "manager" }]);
    const removed = await scim("PATCH", `/Groups/${group.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "remove", path: `members[value eq "${id}"]` }],
    });
    expect(removed.body.members).toEqual([]);
    expect(await workspacesOf(id)).toEqual([]);

    const audit = await api("GET", "/v1/audit-logs?resource_type=user&limit=100");
    const actions = audit.body.data.filter((entry: any) => entry.resource_id === id).map((entry: any) => entry.action);
    expect(actions).toEqual(expect.arrayContaining(["create", "deactivate", "reactivate"]));
    const members = await api("GET", "/v1/audit-logs?resource_type=workspace_member&limit=100");
    expect(members.body.data.some((entry: any) => entry.actor.api_key_id === tokenId)).toBe(true);
  });
});

describe("Entra ID", () => {
  it("creates, finds, group-pushes with members, patches membership, deletes", async () => {
    const create = {
      schemas: [USER, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
      externalId: "entra-guid-1",
      userName: "grace@example.com",
      active: true,
      emails: [{ primary: true, type: "work", value: "grace@example.com" }],
      meta: { resourceType: "User" },
      name: { formatted: "Grace Hopper", familyName: "Hopper", givenName: "Grace" },
      roles: [],
    };
    const created = await scim("POST", "/Users", create);
    expect(created.status).toBe(201);
    const id = created.body.id;
    const second = (
      await scim("POST", "/Users", { ...create, externalId: "entra-guid-2", userName: "alan@example.com", emails: [] })
    ).body.id;

    const found = await scim(
      "GET",
      `/Users?filter=${encodeURIComponent('emails[type eq "work"].value eq "grace@example.com"')}`,
    );
    expect(found.body.Resources.map((user: any) => user.id)).toEqual([id]);

    const ws = (await api("POST", "/v1/admin/workspaces", { name: "Entra WS", slug: "entra-ws" })).body;
    // Mapped by name before Entra pushes the group.
    const mapping = await api("POST", "/v1/admin/scim/group-mappings", {
      group: "Entra Analysts",
      workspace_id: ws.id,
    });
    expect(mapping.status).toBe(201);
    const conflicting = await api("POST", "/v1/admin/scim/group-mappings", {
      group: "entra analysts",
      workspace_id: ws.id,
      role: "manager",
    });
    expect(conflicting.status).toBe(409);
    expect(conflicting.body.error).toMatchObject({ param: "role", code: "scim_role_conflict" });
    expect(
      (await api("POST", "/v1/admin/scim/group-mappings", { group: "x", workspace_id: ws.id, role: "boss" })).body.error
        .param,
    ).toBe("role");

    const group = await scim("POST", "/Groups", {
      schemas: [GROUP],
      externalId: "entra-group-1",
      displayName: "Entra Analysts",
      members: [{ value: id }],
    });
    expect(group.status).toBe(201);
    expect(await workspacesOf(id)).toEqual([{ id: ws.id, role: "member" }]);
    const byName = await scim(
      "GET",
      `/Groups?filter=${encodeURIComponent('displayName eq "Entra Analysts"')}&excludedAttributes=members`,
    );
    expect(byName.body.totalResults).toBe(1);
    expect(byName.body.Resources[0].members).toBeUndefined();

    const add = await scim("PATCH", `/Groups/${group.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Add", path: "members", value: [{ value: second }] }],
    });
    expect(add.status).toBe(200);
    expect(await workspacesOf(second)).toEqual([{ id: ws.id, role: "member" }]);
    await scim("PATCH", `/Groups/${group.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Remove", path: "members", value: [{ value: second }] }],
    });
    expect(await workspacesOf(second)).toEqual([]);

    // Entra's soft delete: Replace active with a string boolean.
    const disabled = await scim("PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: "Replace", path: "active", value: "False" },
        { op: "Replace", path: "name.familyName", value: "Hopper-Murray" },
      ],
    });
    expect(disabled.body).toMatchObject({ active: false, name: { familyName: "Hopper-Murray" } });
    expect(await workspacesOf(id)).toEqual([]);

    // Spec 4.8 views.
    const views = await api("GET", "/v1/scim/workspaces?page=0&page_size=50");
    expect(views.body).toMatchObject({ page: 0, page_size: 50 });
    expect(views.body.total_count).toBeGreaterThanOrEqual(3);
    const entraView = views.body.data.find((entry: any) => entry.id === ws.id);
    expect(entraView.groups).toEqual([expect.objectContaining({ display_name: "Entra Analysts", role: "member" })]);
    const searched = await api("GET", "/v1/scim/groups?search=analy");
    expect(searched.body.data.map((entry: any) => entry.id)).toEqual([group.body.id]);
    expect(searched.body.total_count).toBe(1);
    const unmapped = await api("DELETE", `/v1/scim/workspaces/${ws.id}/groups/${group.body.id}`);
    expect(unmapped).toEqual({ status: 200, body: { success: true } });

    expect((await scim("DELETE", `/Users/${id}`)).status).toBe(204);
    expect((await scim("GET", `/Users/${id}`)).status).toBe(404);
    expect((await api("GET", `/v1/admin/users/${id}`)).status).toBe(404);
    expect((await scim("DELETE", `/Groups/${group.body.id}`)).status).toBe(204);
  });

  it("answers 400 naming the attribute for bad bodies", async () => {
    const missing = await scim("POST", "/Users", { schemas: [USER], name: { givenName: "x" } });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ scimType: "invalidValue", detail: expect.stringContaining("userName") });
    const patch = await scim("PATCH", "/Users/usr_whatever", { schemas: [PATCH_OP] });
    expect(patch.status).toBe(400);
    expect(patch.body).toMatchObject({ scimType: "invalidSyntax", detail: expect.stringContaining("Operations") });
    const noGroupName = await scim("POST", "/Groups", { schemas: [GROUP] });
    expect(noGroupName.body.detail).toContain("displayName");
  });

  it("answers 400 invalidFilter for a filter of 100,000 parentheses or one nested too deep, never a 500", async () => {
    for (const filter of ["(".repeat(100_000), `${"(".repeat(17)}userName eq "a@b.c"${")".repeat(17)}`]) {
      for (const resource of ["Users", "Groups"]) {
        const answer = await scim("GET", `/${resource}?filter=${encodeURIComponent(filter)}`);
        expect(answer.status, `${resource} ${filter.slice(0, 40)}`).toBe(400);
        expect(answer.body).toMatchObject({
          scimType: "invalidFilter",
          detail: expect.stringMatching(/longer|deeper/),
        });
      }
    }
    const nested = await scim("GET", `/Users?filter=${encodeURIComponent('((((userName eq "nobody@b.c"))))')}`);
    expect(nested.status).toBe(200);
    expect(nested.body.totalResults).toBe(0);
  });
});

describe("isolation", () => {
  it("a token of one organisation cannot see or touch another's users, and workspace keys cannot manage SCIM", async () => {
    const other = await createApiKey(gateway.gateway.services.stores.records, {
      organisationId: "org_other",
      name: "other admin",
      keyType: "organisation",
      keySubType: "service",
      scopes: ["*"],
    });
    const otherToken = (await api("POST", "/v1/admin/scim/tokens", { name: "B" }, other.secret)).body.token;
    const theirs = await scim("POST", "/Users", oktaUser("bob@other.example", "b1"), otherToken);
    expect(theirs.status).toBe(201);

    expect((await scim("GET", `/Users/${theirs.body.id}`)).status).toBe(404);
    expect(
      (
        await scim("PATCH", `/Users/${theirs.body.id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "replace", value: { active: false } }],
        })
      ).status,
    ).toBe(404);
    expect((await scim("DELETE", `/Users/${theirs.body.id}`)).status).toBe(404);
    const list = await scim("GET", "/Users");
    expect(list.body.Resources.map((user: any) => user.userName)).not.toContain("bob@other.example");
    const group = await scim("POST", "/Groups", {
      schemas: [GROUP],
      displayName: "Steal",
      members: [{ value: theirs.body.id }],
    });
    expect(group.status).toBe(400);
    expect((await scim("GET", `/Users/${theirs.body.id}`, undefined, otherToken)).body.active).toBe(true);
    expect((await api("GET", "/v1/admin/scim/tokens", undefined, other.secret)).body.data).toHaveLength(1);

    const workspaceKey = await createApiKey(gateway.gateway.services.stores.records, {
      organisationId: gateway.gateway.bootstrap.organisationId,
      workspaceId: gateway.gateway.bootstrap.defaultWorkspaceId,
      name: "ws",
      keyType: "workspace",
      keySubType: "service",
      scopes: ["scim_tokens.create", "scim_group_mappings.list"],
    });
    expect((await api("POST", "/v1/admin/scim/tokens", {}, workspaceKey.secret)).status).toBe(403);
    expect((await api("GET", "/v1/scim/workspaces", undefined, workspaceKey.secret)).status).toBe(403);
  });
});
