import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { type TestGateway, apiCaller, startTestGateway } from "../helpers/gateway.ts";

/** Denied log export fields (spec 4.8, 7), set through the admin API and enforced on export create and update. */

let gateway: TestGateway;
let portkey: Portkey;
const api = apiCaller(() => gateway);

beforeAll(async () => {
  gateway = await startTestGateway();
  portkey = new Portkey({ apiKey: gateway.adminKey, baseURL: `${gateway.url}/v1` });
});

afterAll(async () => {
  await gateway?.close();
});

describe("log export field restrictions", () => {
  it("sets organisation and workspace denied fields through the API and refuses exports asking for them", async () => {
    const setOrg = await api("PUT", "/v1/admin/organisation/settings", {
      log_export_denied_fields: ["request", "response", "request"],
    });
    expect(setOrg.status).toBe(200);
    expect(setOrg.body.log_export_denied_fields).toEqual(["request", "response"]);

    const created = await api("POST", "/v1/admin/workspaces", { name: "Restricted" });
    const workspaceId = created.body.id as string;
    const orgWide = await api("GET", `/v1/logs/exports/field-restrictions?workspace_id=${workspaceId}`);
    expect(orgWide.body).toMatchObject({ denied_fields: ["request", "response"], source: "organisation" });

    // The workspace override, through the SDK's workspaces.update (PUT /admin/workspaces/{id}).
    await portkey.admin.workspaces.update({ workspaceId, log_export_denied_fields: ["metadata"] } as never);
    const override = await api("GET", `/v1/logs/exports/field-restrictions?workspace_id=${workspaceId}`);
    expect(override.body).toMatchObject({ denied_fields: ["metadata"], source: "workspace" });
    expect((await api("GET", `/v1/admin/workspaces/${workspaceId}`)).body.log_export_denied_fields).toEqual([
      "metadata",
    ]);

    const refused = await api("POST", "/v1/logs/exports", {
      workspace_id: workspaceId,
      requested_data: ["id", "metadata"],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "denied_export_field", param: "requested_data" });
    await expect(
      portkey.logs.exports.create({ workspaceId, requestedData: ["id", "metadata"] } as never),
    ).rejects.toMatchObject({ status: 400 });

    // The override replaces the organisation list: `request` is allowed here, refused elsewhere.
    const allowed = await api("POST", "/v1/logs/exports", {
      workspace_id: workspaceId,
      requested_data: ["id", "request"],
    });
    expect(allowed.status).toBe(201);
    const updateRefused = await api("PUT", `/v1/logs/exports/${allowed.body.id}`, { requested_data: ["metadata"] });
    expect(updateRefused.status).toBe(400);
    const orgRefused = await api("POST", "/v1/logs/exports", { requested_data: ["id", "request"] });
    expect(orgRefused.status).toBe(400);

    // Clearing the override returns the workspace to the organisation's list.
    await api("PUT", `/v1/admin/workspaces/${workspaceId}`, { log_export_denied_fields: null });
    expect((await api("GET", `/v1/logs/exports/field-restrictions?workspace_id=${workspaceId}`)).body.source).toBe(
      "organisation",
    );
  });

  it("answers 400 naming the param for fields that are not export fields", async () => {
    const org = await api("PUT", "/v1/admin/organisation/settings", { log_export_denied_fields: ["passwords"] });
    expect(org.status).toBe(400);
    expect(org.body.error.param).toMatch(/^log_export_denied_fields/);
    const workspace = await api("POST", "/v1/admin/workspaces", { name: "Bad", log_export_denied_fields: "id" });
    expect(workspace.status).toBe(400);
    expect(workspace.body.error.param).toMatch(/^log_export_denied_fields/);
  });

  it("audits the change and a workspace key cannot change the organisation's list", async () => {
    await api("PUT", "/v1/admin/organisation/settings", { log_export_denied_fields: ["headers"] });
    const audit = await api("GET", "/v1/audit-logs?resource_type=organisation_settings");
    expect(JSON.stringify(audit.body)).toContain('"log_export_denied_fields":["headers"]');
    const { organisationId, defaultWorkspaceId } = gateway.gateway.bootstrap;
    const workspaceKey = await createApiKey(gateway.gateway.services.stores.records, {
      organisationId,
      workspaceId: defaultWorkspaceId,
      keyType: "workspace",
      keySubType: "service",
      name: "ws",
      scopes: ["*"],
    });
    const refused = await api(
      "PUT",
      "/v1/admin/organisation/settings",
      { log_export_denied_fields: [] },
      workspaceKey.secret,
    );
    expect(refused.status).toBe(403);
    expect((await api("GET", "/v1/logs/exports/field-restrictions")).body.denied_fields).toEqual(["headers"]);
  });
});
