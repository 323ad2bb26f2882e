import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { recordAudit } from "../../core/control/audit.ts";
import { organisationBlocksInlineConfig, organisationGuardrailsFor } from "../../core/control/organisation/store.ts";
import { blockInlineConfigFor } from "../../core/control/workspaces/store.ts";
import { type TestGateway, apiCaller, startTestGateway } from "../helpers/gateway.ts";

/** Organisation settings, default guardrails, workspace exclusions and the audit log, through HTTP. */

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

describe("organisation settings", () => {
  it("reads and updates settings, normalising the rotation period", async () => {
    const initial = await api("GET", "/v1/admin/organisation/settings");
    expect(initial.status).toBe(200);
    // The deployment's first organisation is bootstrapped with block_inline_config explicitly off (clearing
    // the setting below falls back to the date rule: on for organisations created from 2026-06-19).
    expect(initial.body).toMatchObject({
      object: "organisation_settings",
      user_api_key_rotation_period: null,
      user_api_key_auto_create: false,
      default_workspace_user_api_key_auto_create: false,
      block_inline_config: false,
    });

    expect(
      (await api("PUT", "/v1/admin/organisation/settings", { user_api_key_rotation_period: "weekly" })).body
        .user_api_key_rotation_period,
    ).toBe(7);
    expect(
      (await api("PUT", "/v1/admin/organisation/settings", { user_api_key_rotation_period: "monthly" })).body
        .user_api_key_rotation_period,
    ).toBe(30);
    const updated = await api("PUT", "/v1/admin/organisation/settings", {
      user_api_key_rotation_period: 90,
      user_api_key_auto_create: true,
      default_workspace_user_api_key_auto_create: false,
      block_inline_config: false,
    });
    expect(updated.body).toMatchObject({
      user_api_key_rotation_period: 90,
      user_api_key_auto_create: true,
      block_inline_config: false,
    });
    expect(await blockInlineConfigFor(records(), false, organisationId, defaultWorkspaceId)).toBe(false);
    expect(await blockInlineConfigFor(records(), true, organisationId)).toBe(true);
    expect(
      (await api("PUT", "/v1/admin/organisation/settings", { block_inline_config: null })).body.block_inline_config,
    ).toBe(true);

    for (const bad of [0, 366, 1.5, "daily"]) {
      const response = await api("PUT", "/v1/admin/organisation/settings", { user_api_key_rotation_period: bad });
      expect(response.status, String(bad)).toBe(400);
      expect(response.body.error.param).toBe("user_api_key_rotation_period");
    }
    expect((await api("PUT", "/v1/admin/organisation/settings", { surprise: true })).status).toBe(400);
  });

  it("applies block_inline_config by creation date (on from 2026-06-19)", () => {
    const day = (d: number) => ({ id: "org_x", name: "x", createdAt: Date.UTC(2026, 5, d) / 1000 });
    expect(organisationBlocksInlineConfig(day(18))).toBe(false);
    expect(organisationBlocksInlineConfig(day(19))).toBe(true);
    expect(organisationBlocksInlineConfig({ ...day(19), settings: { block_inline_config: false } })).toBe(false);
  });

  it("refuses workspace keys", async () => {
    const key = await createApiKey(records(), {
      organisationId,
      workspaceId: defaultWorkspaceId,
      name: "ws",
      keyType: "workspace",
      keySubType: "service",
      scopes: [
        "organisation_settings.read",
        "organisation_settings.update",
        "organisation_exclusions.list",
        "audit_logs.list",
      ],
    });
    for (const path of [
      "/v1/admin/organisation/settings",
      "/v1/admin/organisation/defaults",
      "/v1/workspace-exclusions/input-guardrails",
      "/v1/audit-logs",
    ]) {
      const response = await api("GET", path, undefined, key.secret);
      expect(response.status, path).toBe(403);
    }
  });
});

describe("organisation defaults and workspace exclusions", () => {
  it("stores references to organisation-level guardrails and returns their id and slug", async () => {
    const guardrail = (slug: string) =>
      api("POST", "/v1/guardrails", {
        name: slug,
        slug,
        checks: [{ id: "default.regexMatch", parameters: { rule: "\\d{3}-\\d{2}-\\d{4}" } }],
      });
    const pii = (await guardrail("pii-redact")).body;
    const toxicity = (await guardrail("toxicity")).body;
    const json = (await guardrail("json-schema")).body;
    const set = await api("PUT", "/v1/admin/organisation/defaults", {
      input_guardrails: [pii.id, "toxicity", { slug: "pii-redact" }],
      output_guardrails: [{ id: json.id }],
    });
    expect(set.status).toBe(200);
    expect(set.body.input_guardrails).toEqual([
      { id: pii.id, slug: "pii-redact" },
      { id: toxicity.id, slug: "toxicity" },
    ]);
    expect((await api("GET", "/v1/admin/organisation/defaults")).body.output_guardrails).toEqual([
      { id: json.id, slug: "json-schema" },
    ]);
    const bad = await api("PUT", "/v1/admin/organisation/defaults", { input_guardrails: ["toxicity", "not valid!"] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("input_guardrails[1]");
    const unknown = await api("PUT", "/v1/admin/organisation/defaults", { input_guardrails: ["gr_abc123"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ param: "input_guardrails[0]", code: "guardrail_not_found" });
  });

  it("merges exclusions, or replaces them with override_existing", async () => {
    const a = (await api("POST", "/v1/admin/workspaces", { name: "A", slug: "ex-a" })).body;
    const b = (await api("POST", "/v1/admin/workspaces", { name: "B", slug: "ex-b" })).body;
    const path = "/v1/workspace-exclusions/input-guardrails";
    expect((await api("PUT", path, { workspace_ids: [a.id] })).body.data.map((e: any) => e.workspace_id)).toEqual([
      a.id,
    ]);
    const merged = await api("PUT", path, { workspace_ids: ["ex-b", a.id] });
    expect(merged.body.data.map((e: any) => e.workspace_id)).toEqual([a.id, b.id]);
    const page = await api("GET", `${path}?limit=1`);
    expect(page.body).toMatchObject({ object: "list", type: "input_guardrails", total: 2, has_more: true });
    expect(page.body.data[0]).toMatchObject({ workspace_id: a.id, slug: "ex-a" });
    expect((await api("GET", `${path}?limit=1&cursor=${page.body.next_cursor}`)).body.data[0].workspace_id).toBe(b.id);

    expect(await organisationGuardrailsFor(records(), organisationId, a.id, "input_guardrails")).toEqual([]);
    expect(
      (await organisationGuardrailsFor(records(), organisationId, defaultWorkspaceId, "input_guardrails")).length,
    ).toBe(2);

    const replaced = await api("PUT", path, { workspace_ids: [b.id], override_existing: true });
    expect(replaced.body.data.map((e: any) => e.workspace_id)).toEqual([b.id]);
    expect((await api("GET", "/v1/workspace-exclusions/output-guardrails")).body.data).toEqual([]);

    const unknown = await api("PUT", path, { workspace_ids: [a.id, "ws_missing"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.param).toBe("workspace_ids[1]");
    expect((await api("PUT", path, { override_existing: true })).body.error.param).toBe("workspace_ids");
  });
});

describe("audit log", () => {
  it("lists entries newest first with filters and pagination, secrets redacted", async () => {
    const entries = await api("GET", "/v1/audit-logs?resource_type=organisation_settings&limit=100");
    expect(entries.status).toBe(200);
    expect(entries.body.data.length).toBeGreaterThanOrEqual(4);
    const times = entries.body.data.map((entry: any) => entry.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(entries.body.data[0]).toMatchObject({
      object: "audit_log",
      action: "update",
      resource_type: "organisation_settings",
      resource_id: organisationId,
      actor: { type: "api_key" },
    });
    expect(entries.body.data[0].actor.api_key_id).toMatch(/^key_/);

    const first = await api("GET", "/v1/audit-logs?resource_type=organisation_settings&limit=2");
    const second = await api(
      "GET",
      `/v1/audit-logs?resource_type=organisation_settings&limit=2&cursor=${first.body.next_cursor}`,
    );
    expect([...first.body.data, ...second.body.data].map((e: any) => e.id)).toEqual(
      entries.body.data.slice(0, 4).map((e: any) => e.id),
    );

    const keyId = entries.body.data[0].actor.api_key_id;
    expect(
      (await api("GET", `/v1/audit-logs?actor_key_id=${keyId}&action=create&resource_type=workspace`)).body.data.length,
    ).toBe(2);
    expect((await api("GET", "/v1/audit-logs?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z")).body.data).toEqual(
      [],
    );
    expect((await api("GET", "/v1/audit-logs?from=yesterday")).body.error.param).toBe("from");
    expect((await api("GET", "/v1/audit-logs?cursor=bad")).status).toBe(400);

    // recordAudit redacts secret-looking fields before they are stored.
    await recordAudit(gateway.gateway.services.stores.records, {
      principal: { kind: "api_key", organisationId, keyId: "key_test", scopes: ["*"] },
      traceId: "t-1",
      action: "update",
      resourceType: "test_secret",
      resourceId: "x",
      after: { name: "n", api_key: "sk-live-secret", nested: { token: "tok-secret" } },
    });
    const redacted = await api("GET", "/v1/audit-logs?resource_type=test_secret");
    expect(redacted.body.data[0].after).toEqual({ name: "n", api_key: "[redacted]", nested: { token: "[redacted]" } });
  });
});
