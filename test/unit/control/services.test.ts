import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Principal } from "../../../core/auth/principal.ts";
import { ensureOrganisation } from "../../../core/control/organisation/bootstrap.ts";
import { Conflict, Forbidden, Gone, Invalid, NotFound } from "../../../core/control/errors.ts";
import { getMembership } from "../../../core/control/workspaces/members.ts";
import * as organisation from "../../../core/control/organisation/service.ts";
import * as policies from "../../../core/control/policies/service.ts";
import { userStore } from "../../../core/control/users/store.ts";
import * as users from "../../../core/control/users/service.ts";
import * as workspaces from "../../../core/control/workspaces/service.ts";
import { type LocalStores, createLocalStores } from "../../../core/platform/local/local-stores.ts";
import { adminPrincipal, auditEntries, thrown, unique, workspacePrincipal } from "../../helpers/control-services.ts";

/**
 * The control-plane services called directly with a principal and plain input, no HTTP: results, the domain
 * errors they throw, the audit entries and the cache notifications they make.
 */

let dataDir: string;
let stores: LocalStores;
let organisationId: string;
let defaultWorkspaceId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "gateway-control-services-"));
  stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  ({ organisationId, defaultWorkspaceId } = await ensureOrganisation(stores.records));
});

afterAll(async () => {
  await stores?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const admin = () => adminPrincipal(organisationId);
const workspaceKey = (workspaceId: string) => workspacePrincipal(organisationId, workspaceId);

const deps = (traceId = "trace-services") => ({
  records: stores.records,
  counters: stores.counters,
  traceId,
  organisationChanged: vi.fn(),
  blockInlineConfigForced: false,
  inviteTtlSeconds: 3600,
  revokeUserKeys: vi.fn(async () => ["key_revoked_1"]),
  policyChanged: vi.fn(),
});

describe("workspaces service", () => {
  it("creates a workspace for an admin and audits it with the principal and trace id", async () => {
    const slug = unique("search");
    const view = await workspaces.createWorkspace(deps("trace-ws-create"), admin(), { name: "Search", slug });
    expect(view).toMatchObject({ object: "workspace", slug, name: "Search", is_default: false });
    expect(await workspaces.getWorkspace(deps(), admin(), { workspace: slug })).toEqual(view);
    const [entry] = await auditEntries(stores.records, organisationId, "trace-ws-create");
    expect(entry).toMatchObject({
      action: "create",
      resourceType: "workspace",
      resourceId: view.id,
      actor: { keyId: "key_admin", kind: "api_key" },
    });
  });

  it("refuses workspace keys (Forbidden) and hides nothing it need not: NotFound for unknown workspaces", async () => {
    const own = await workspaces.createWorkspace(deps(), admin(), { name: "Own", slug: unique("own") });
    const other = await workspaces.createWorkspace(deps(), admin(), { name: "Other", slug: unique("other") });
    const key = workspaceKey(own.id);

    const create = await thrown(workspaces.createWorkspace(deps(), key, { name: "Nope" }));
    expect(create).toBeInstanceOf(Forbidden);
    expect(create).toMatchObject({ code: "admin_required" });

    expect(await workspaces.getWorkspace(deps(), key, { workspace: own.id })).toMatchObject({ id: own.id });
    expect(await thrown(workspaces.getWorkspace(deps(), key, { workspace: other.id }))).toMatchObject({
      kind: "not_found",
      code: "workspace_not_found",
    });
    const missing = await thrown(workspaces.getWorkspace(deps(), admin(), { workspace: "ws_missing" }));
    expect(missing).toBeInstanceOf(NotFound);
    expect(missing).toMatchObject({ code: "workspace_not_found" });

    const listed = await workspaces.listWorkspaces(deps(), key, { limit: 100 });
    expect(listed.items.map((ws) => ws.id)).toEqual([own.id]);
  });

  it("reads lazy input only after the access checks: another workspace's caller never sees it validated", async () => {
    const own = await workspaces.createWorkspace(deps(), admin(), { name: "Mine", slug: unique("mine") });
    const other = await workspaces.createWorkspace(deps(), admin(), { name: "Theirs", slug: unique("theirs") });
    const invalidBody = vi.fn(async () => {
      throw new Invalid("the body is invalid");
    });
    const members = await thrown(
      workspaces.addWorkspaceMembers(deps(), workspaceKey(own.id), { workspace: other.id, members: invalidBody }),
    );
    expect(members).toBeInstanceOf(Forbidden);
    const missing = await thrown(
      workspaces.updateWorkspace(deps(), admin(), { workspace: "ws_missing", changes: invalidBody }),
    );
    expect(missing).toBeInstanceOf(NotFound);
    expect(invalidBody).not.toHaveBeenCalled();
    // Once access is granted, the input is read (and its error is the caller's answer).
    const read = await thrown(
      workspaces.updateWorkspace(deps(), admin(), { workspace: other.id, changes: invalidBody }),
    );
    expect(read).toBeInstanceOf(Invalid);
    expect(invalidBody).toHaveBeenCalledOnce();
  });

  it("updates and tells the settings cache; the default workspace keeps its slug and cannot be deleted", async () => {
    const d = deps();
    const created = await workspaces.createWorkspace(d, admin(), { name: "Cache", slug: unique("cache") });
    const updated = await workspaces.updateWorkspace(d, admin(), {
      workspace: created.id,
      changes: { security_settings: { block_inline_config: true } },
    });
    expect(updated.security_settings.block_inline_config).toBe(true);
    expect(d.organisationChanged).toHaveBeenCalledWith(organisationId);

    const slug = await thrown(
      workspaces.updateWorkspace(d, admin(), { workspace: defaultWorkspaceId, changes: { slug: "renamed" } }),
    );
    expect(slug).toBeInstanceOf(Invalid);
    expect(slug).toMatchObject({ param: "slug" });

    const config = await thrown(
      workspaces.updateWorkspace(d, admin(), { workspace: created.id, changes: { defaults: { config_id: "nope" } } }),
    );
    expect(config).toMatchObject({ kind: "invalid", param: "defaults.config_id", code: "config_not_found" });

    const remove = await thrown(workspaces.deleteWorkspace(d, admin(), { workspace: "default" }));
    expect(remove).toBeInstanceOf(Conflict);
    expect(await workspaces.deleteWorkspace(d, admin(), { workspace: created.id })).toEqual({ id: created.id });
    expect(await thrown(workspaces.getWorkspace(d, admin(), { workspace: created.id }))).toBeInstanceOf(NotFound);
  });

  it("adds members all or nothing: an unknown user adds nobody, a second add conflicts on its entry", async () => {
    const ws = await workspaces.createWorkspace(deps(), admin(), { name: "Team", slug: unique("team") });
    const email = `${unique("ann")}@example.com`;
    const ann = await userStore(stores.records).create(organisationId, { slug: email, email, role: "member" });

    const unknown = await thrown(
      workspaces.addWorkspaceMembers(deps(), admin(), {
        workspace: ws.id,
        members: [
          { user: ann.id, role: "member", param: "users[0].id" },
          { user: "usr_missing", role: "member", param: "users[1].id" },
        ],
      }),
    );
    expect(unknown).toMatchObject({ kind: "not_found", code: "user_not_found" });
    expect(await getMembership(stores.records, ws.id, ann.id)).toBeUndefined();

    const [added] = await workspaces.addWorkspaceMembers(deps(), admin(), {
      workspace: ws.id,
      members: [{ user: email.toUpperCase(), role: "manager", param: "email" }],
    });
    expect(added).toMatchObject({ user_id: ann.id, role: "manager", email });

    const again = await thrown(
      workspaces.addWorkspaceMembers(deps(), admin(), {
        workspace: ws.id,
        members: [{ user: ann.id, role: "member", param: "user_id" }],
      }),
    );
    expect(again).toBeInstanceOf(Conflict);
    expect(again).toMatchObject({ param: "user_id" });

    const missing = await thrown(
      workspaces.removeWorkspaceMember(deps(), admin(), { workspace: ws.id, user: "usr_nobody" }),
    );
    expect(missing).toMatchObject({ kind: "not_found", code: "member_not_found" });
  });
});

describe("users service", () => {
  it("deletes a user through the key revoker it is given, and never the caller's own user", async () => {
    const email = `${unique("bob")}@example.com`;
    const bob = await userStore(stores.records).create(organisationId, { slug: email, email, role: "admin" });
    const asBob: Principal = { ...admin(), kind: "jwt", keyId: undefined, userId: bob.id, organisationRole: "admin" };

    const self = await thrown(users.deleteUser(deps(), asBob, { user: bob.id }));
    expect(self).toBeInstanceOf(Invalid);
    expect(self).toMatchObject({ code: "cannot_delete_self" });

    const d = deps("trace-user-delete");
    expect(await users.deleteUser(d, admin(), { user: email })).toEqual({
      id: bob.id,
      revokedApiKeys: ["key_revoked_1"],
    });
    expect(d.revokeUserKeys).toHaveBeenCalledWith(organisationId, bob.id);
    expect(await thrown(users.getUser(d, admin(), { user: bob.id }))).toBeInstanceOf(NotFound);
    const [entry] = await auditEntries(stores.records, organisationId, "trace-user-delete");
    expect(entry).toMatchObject({
      action: "delete",
      resourceId: bob.id,
      after: { revoked_api_keys: ["key_revoked_1"] },
    });
  });

  it("invites: only owners invite owners; the token accepts once, then the invite is Gone", async () => {
    const adminUser: Principal = { ...admin(), organisationRole: "admin" };
    const ownerInvite = await thrown(
      users.createInvite(deps(), adminUser, { email: `${unique("o")}@example.com`, role: "owner", workspaces: [] }),
    );
    expect(ownerInvite).toBeInstanceOf(Forbidden);
    expect(ownerInvite).toMatchObject({ param: "role" });

    const badWorkspace = await thrown(
      users.createInvite(deps(), admin(), {
        email: `${unique("w")}@example.com`,
        role: "member",
        workspaces: [{ id: "ws_missing", role: "member" }],
      }),
    );
    expect(badWorkspace).toMatchObject({ kind: "invalid", param: "workspaces[0].id", code: "workspace_not_found" });

    const email = `${unique("carol")}@example.com`;
    const issued = await users.createInvite(deps(), admin(), {
      email,
      role: "member",
      workspaces: [{ id: defaultWorkspaceId, role: "member" }],
    });
    expect(issued.invite).toMatchObject({ object: "invite", email, status: "pending" });
    const duplicate = await thrown(users.createInvite(deps(), admin(), { email, role: "member", workspaces: [] }));
    expect(duplicate).toMatchObject({ kind: "conflict", param: "email" });

    expect(await thrown(users.acceptInvite(deps(), { token: undefined }))).toMatchObject({
      kind: "invalid",
      param: "token",
    });
    expect(await thrown(users.acceptInvite(deps(), { token: "inv-not-a-real-token" }))).toBeInstanceOf(NotFound);

    const accepted = await users.acceptInvite(deps("trace-accept"), { token: issued.token, name: "Carol" });
    expect(accepted.user).toMatchObject({ email, name: "Carol", workspaces: [{ id: defaultWorkspaceId }] });
    const [entry] = await auditEntries(stores.records, organisationId, "trace-accept");
    expect(entry).toMatchObject({ action: "accept_invite", actor: { userId: accepted.user.id, kind: "jwt" } });

    const again = await thrown(users.acceptInvite(deps(), { token: issued.token }));
    expect(again).toBeInstanceOf(Gone);
    expect(again).toMatchObject({ code: "invite_accepted" });
    const resend = await thrown(users.resendInvite(deps(), admin(), { invite: accepted.inviteId }));
    expect(resend).toMatchObject({ kind: "conflict", code: "invite_accepted" });
  });
});

describe("organisation service", () => {
  it("updates settings, tells the settings cache, and shows the deployment's forced block_inline_config", async () => {
    const d = { ...deps(), blockInlineConfigForced: true };
    const after = await organisation.updateOrganisationSettings(d, admin(), { user_api_key_rotation_period: 7 });
    expect(after).toMatchObject({ user_api_key_rotation_period: 7, block_inline_config: true });
    expect(d.organisationChanged).toHaveBeenCalledWith(organisationId);
    const refused = await thrown(organisation.getOrganisationSettings(d, workspaceKey(defaultWorkspaceId)));
    expect(refused).toMatchObject({ kind: "forbidden", code: "admin_required" });
  });

  it("answers Invalid for malformed cursors and unknown excluded workspaces", async () => {
    const cursor = await thrown(
      organisation.listWorkspaceExclusions(deps(), admin(), {
        phase: "input_guardrails",
        query: { limit: 10, cursor: "zzz" },
      }),
    );
    expect(cursor).toMatchObject({ kind: "invalid", param: "cursor", code: "invalid_cursor" });
    expect(await thrown(organisation.listAuditLogs(deps(), admin(), { limit: 10, cursor: "zzz" }))).toBeInstanceOf(
      Invalid,
    );
    const unknown = await thrown(
      organisation.updateWorkspaceExclusions(deps(), admin(), {
        phase: "output_guardrails",
        changes: { workspace_ids: ["default", "ws_missing"], override_existing: false },
      }),
    );
    expect(unknown).toMatchObject({ kind: "invalid", param: "workspace_ids[1]", code: "workspace_not_found" });

    const page = await organisation.updateWorkspaceExclusions(deps(), admin(), {
      phase: "output_guardrails",
      changes: { workspaces: ["default"], override_existing: true },
    });
    expect(page).toMatchObject({ total: 1, items: [{ workspace_id: defaultWorkspaceId, slug: "default" }] });
  });

  it("lists the audit entries services wrote, filtered", async () => {
    await workspaces.createWorkspace(deps("trace-audit-list"), admin(), { name: "Audited", slug: unique("aud") });
    const page = await organisation.listAuditLogs(deps(), admin(), { limit: 5, resourceType: "workspace" });
    expect(page.items[0]).toMatchObject({ resource_type: "workspace", trace_id: "trace-audit-list" });
  });
});

describe("policies service", () => {
  it("creates, hides other workspaces' policies (NotFound) and tells the enforcer of every change", async () => {
    const ws = await workspaces.createWorkspace(deps(), admin(), { name: "Limits", slug: unique("limits") });
    const d = deps();
    const created = await policies.createPolicy(d, admin(), {
      family: "rate_limits",
      body: { type: "requests", unit: "rpm", value: 5, workspace_id: ws.id, conditions: [], group_by: [] },
    });
    expect(created).toMatchObject({ object: "policy_rate_limits", workspace_id: ws.id, value: 5 });
    expect(d.policyChanged).toHaveBeenCalledWith(organisationId, expect.objectContaining({ id: created.id }));

    const hidden = await thrown(
      policies.getPolicy(d, workspaceKey(defaultWorkspaceId), { family: "rate_limits", id: created.id }),
    );
    expect(hidden).toBeInstanceOf(NotFound);
    expect(hidden).toMatchObject({ code: "policy_not_found" });
    // The other family never finds it either.
    expect(await thrown(policies.getPolicy(d, admin(), { family: "usage_limits", id: created.id }))).toBeInstanceOf(
      NotFound,
    );

    const usage = await policies.policyUsage(d, admin(), {
      family: "rate_limits",
      id: created.id,
      query: { limit: 10 },
    });
    expect(usage).toMatchObject({ policyId: created.id, type: "requests", items: [] });

    await policies.deletePolicy(d, admin(), { family: "rate_limits", id: created.id });
    expect(d.policyChanged).toHaveBeenLastCalledWith(organisationId, undefined, created.id);
  });
});
