import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardrailStore } from "../../core/control/guardrails/store.ts";
import { DEFAULT_CHECK_TIMEOUT_MS, MAX_CHECK_TIMEOUT_MS } from "../../core/inference/guardrails/types.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/**
 * Saved guardrails through HTTP: the portkey-ai SDK's create / list / retrieve / update / delete, versions,
 * validation (400 in OpenAI's error shape, naming the field), the two scope families (workspace and
 * organisation-level guardrails), the organisation defaults that must name organisation-level guardrails, and
 * the 409 on deleting a default.
 */

let gateway: TestGateway;
let admin: string;
let portkey: Portkey;
let wsA: { id: string; slug?: string };

const regexCheck = (rule: string) => ({ id: "default.regexMatch", parameters: { rule } });
const feedback = (value: number) => ({ feedback: { value, weight: 1, metadata: "" } });

beforeAll(async () => {
  gateway = await startTestGateway();
  admin = gateway.adminKey;
  portkey = new Portkey({ apiKey: admin, baseURL: `${gateway.url}/v1` });
  wsA = await seedWorkspace(gateway, "Guardrails A");
});

afterAll(async () => {
  await gateway?.close();
});

/** What the SDK threw: its HTTP status and the OpenAI-shaped error body. */
async function sdkError(promise: Promise<unknown>): Promise<{ status: number; error: any }> {
  const error: any = await promise.then(
    () => expect.fail("expected the SDK call to fail"),
    (failure: unknown) => failure,
  );
  return { status: error.status, error: error.error?.error };
}

describe("the portkey-ai SDK against /v1/guardrails", () => {
  it("creates, retrieves, lists, updates and deletes a guardrail", async () => {
    const created: any = await portkey.guardrails.create({
      name: "No card numbers",
      checks: [{ ...regexCheck("\\b\\d{4}-\\d{4}-\\d{4}-\\d{4}\\b"), name: "card" }],
      actions: { deny: true, async: false, on_success: feedback(5), on_fail: feedback(-5) },
    });
    expect(created).toMatchObject({ object: "guardrail", version_id: "1", workspace_id: null, status: "active" });
    expect(created.id).toMatch(/^gr_/);

    const details: any = await portkey.guardrails.retrieve({ guardrail_id: created.id });
    expect(details).toMatchObject({
      id: created.id,
      name: "No card numbers",
      organisation_id: gateway.gateway.bootstrap.organisationId,
      checks: [
        {
          id: "default.regexMatch",
          name: "card",
          is_enabled: true,
          // Parameters are stored parsed: the check's defaults are filled in.
          parameters: { rule: "\\b\\d{4}-\\d{4}-\\d{4}-\\d{4}\\b", not: false },
        },
      ],
      actions: {
        deny: true,
        async: false,
        soft_deny_200: false,
        on_error: "open",
        timeout_ms: DEFAULT_CHECK_TIMEOUT_MS,
        on_success: { feedback: { value: 5, weight: 1, metadata: "" } },
        on_fail: { feedback: { value: -5, weight: 1, metadata: "" } },
      },
    });

    const second: any = await portkey.guardrails.create({
      name: "Second",
      workspace_id: wsA.id,
      checks: [regexCheck("hello")],
    } as never);
    expect(second.workspace_id).toBe(wsA.id);
    const everything: any = await portkey.guardrails.list();
    expect(everything.total).toBeGreaterThanOrEqual(2);
    const ids = everything.data.map((item: any) => item.id);
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(created.id));
    // Portkey's page numbers start at 0.
    const pageOne: any = await portkey.guardrails.list({ page_size: 1, current_page: 1 });
    expect(pageOne.data.map((item: any) => item.id)).toEqual([ids[1]]);
    expect(pageOne.total).toBe(everything.total);
    const ofWorkspace: any = await portkey.guardrails.list({ workspace_id: wsA.id });
    expect(ofWorkspace.data.map((item: any) => item.id)).toEqual([second.id]);

    const updated: any = await portkey.guardrails.update({
      guardrail_id: created.id,
      name: "No card or phone numbers",
      checks: [regexCheck("\\d{4}-\\d{4}"), regexCheck("\\+\\d{6,}")],
    });
    expect(updated).toMatchObject({ id: created.id, version_id: "2", name: "No card or phone numbers" });
    expect(updated.checks).toHaveLength(2);
    // Actions not sent are kept.
    expect(updated.actions).toMatchObject({ deny: true, on_fail: { feedback: { value: -5 } } });

    expect(await portkey.guardrails.delete({ guardrail_id: second.id })).toMatchObject({
      id: second.id,
      deleted: true,
    });
    const gone = await sdkError(portkey.guardrails.retrieve({ guardrail_id: second.id }));
    expect(gone.status).toBe(404);
    expect(gone.error).toMatchObject({ code: "guardrail_not_found" });
  });

  it("stores every update as a version, readable by number", async () => {
    const created = await call(gateway, admin, "POST", "/v1/guardrails", {
      name: "v1",
      slug: "versioned-guardrail",
      checks: [regexCheck("one")],
    });
    expect(created.status).toBe(201);
    await call(gateway, admin, "PUT", "/v1/guardrails/versioned-guardrail", {
      name: "v2",
      checks: [regexCheck("two")],
    });
    await call(gateway, admin, "PUT", "/v1/guardrails/versioned-guardrail", { actions: { on_error: "closed" } });

    const versions = await call(gateway, admin, "GET", "/v1/guardrails/versioned-guardrail/versions");
    expect(versions.status).toBe(200);
    expect(versions.body.data.map((item: any) => [item.version, item.name])).toEqual([
      [3, "v2"],
      [2, "v2"],
      [1, "v1"],
    ]);
    expect(versions.body.data[0].actions.on_error).toBe("closed");
    expect(versions.body.data[2].actions.on_error).toBe("open");

    const first = await call(gateway, admin, "GET", "/v1/guardrails/versioned-guardrail?version=1");
    expect(first.body).toMatchObject({ version: 1, current_version: 3, name: "v1" });
    expect(first.body.checks[0].parameters.rule).toBe("one");
    expect((await call(gateway, admin, "GET", `/v1/guardrails/${created.body.id}`)).body.version).toBe(3);
    const missing = await call(gateway, admin, "GET", "/v1/guardrails/versioned-guardrail?version=9");
    expect(missing).toMatchObject({ status: 404, body: { error: { code: "version_not_found" } } });
    const malformed = await call(gateway, admin, "GET", "/v1/guardrails/versioned-guardrail?version=first");
    expect(malformed).toMatchObject({ status: 400, body: { error: { param: "version" } } });

    const deleted = await call(gateway, admin, "DELETE", "/v1/guardrails/versioned-guardrail");
    expect(deleted.status).toBe(200);
    const records = gateway.gateway.services.stores.records;
    const left = await records.query({ partition: `GUARDRAIL#${created.body.id}`, limit: 10 });
    expect(left.items).toEqual([]);
  });
});

describe("validation", () => {
  const bad: Array<[string, Record<string, unknown>, string]> = [
    ["an unknown check", { checks: [regexCheck("a"), { id: "default.noSuchCheck", parameters: {} }] }, "checks[1].id"],
    ["a pattern RE2 refuses", { checks: [regexCheck("(?=look-ahead)")] }, "checks[0].parameters"],
    ["a missing parameter", { checks: [{ id: "default.regexMatch", parameters: {} }] }, "checks[0].parameters.rule"],
    ["no checks", { checks: [] }, "checks"],
    ["too many checks", { checks: Array.from({ length: 51 }, () => regexCheck("a")) }, "checks"],
    ["async with deny", { checks: [regexCheck("a")], actions: { async: true, deny: true } }, "actions.async"],
    [
      "async with soft_deny_200",
      { checks: [regexCheck("a")], actions: { async: true, soft_deny_200: true } },
      "actions.async",
    ],
    [
      "a timeout above the maximum",
      { checks: [regexCheck("a")], actions: { timeout_ms: MAX_CHECK_TIMEOUT_MS + 1 } },
      "actions.timeout_ms",
    ],
    ["an unknown on_error", { checks: [regexCheck("a")], actions: { on_error: "ignore" } }, "actions.on_error"],
    [
      "feedback out of range",
      { checks: [regexCheck("a")], actions: { on_fail: { feedback: { value: 50, weight: 1 } } } },
      "actions.on_fail.feedback.value",
    ],
    ["an unknown field", { checks: [regexCheck("a")], mode: "strict" }, ""],
  ];

  for (const [what, body, param] of bad) {
    it(`answers 400 for ${what}, in OpenAI's error shape`, async () => {
      const answer = await call(gateway, admin, "POST", "/v1/guardrails", { name: "bad", ...body });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toEqual({
        message: expect.any(String),
        type: "invalid_request_error",
        param: param || null,
        code: expect.any(String),
      });
    });
  }

  it("names the check's field through the SDK too, and refuses an async update of a denying guardrail", async () => {
    const refused = await sdkError(
      portkey.guardrails.create({
        name: "bad",
        checks: [{ id: "default.regexMatch", parameters: { rule: 42 } }],
      } as never),
    );
    expect(refused).toMatchObject({ status: 400, error: { param: "checks[0].parameters.rule" } });

    const denying = await call(gateway, admin, "POST", "/v1/guardrails", {
      name: "denying",
      checks: [regexCheck("a")],
      actions: { deny: true },
    });
    const update = await call(gateway, admin, "PUT", `/v1/guardrails/${denying.body.id}`, { actions: { async: true } });
    expect(update).toMatchObject({ status: 400, body: { error: { param: "actions.async" } } });
    const fine = await call(gateway, admin, "PUT", `/v1/guardrails/${denying.body.id}`, {
      actions: { async: true, deny: false },
    });
    expect(fine.body.actions).toMatchObject({ async: true, deny: false });
  });

  it("keeps a guardrail where it is: an update naming another workspace is refused", async () => {
    const orgLevel = await call(gateway, admin, "POST", "/v1/guardrails", { name: "org", checks: [regexCheck("a")] });
    const move = await call(gateway, admin, "PUT", `/v1/guardrails/${orgLevel.body.id}`, { workspace_id: wsA.id });
    expect(move).toMatchObject({
      status: 400,
      body: { error: { param: "workspace_id", code: "guardrail_cannot_move" } },
    });
    const unknown = await call(gateway, admin, "POST", "/v1/guardrails", {
      name: "nowhere",
      workspace_id: "ws_missing",
      checks: [regexCheck("a")],
    });
    expect(unknown).toMatchObject({ status: 400, body: { error: { param: "workspace_id" } } });
  });
});

describe("workspace and organisation-level guardrails", () => {
  it("lets a workspace key see its workspace's and organisation-level guardrails, and change only its own", async () => {
    const wsB = await seedWorkspace(gateway, "Guardrails B");
    const keyA = await createKey(gateway, admin, "workspace", "service", {
      name: "a-guardrails",
      workspace_id: wsA.id,
      scopes: ["*"],
    });
    const orgLevel = await call(gateway, admin, "POST", "/v1/guardrails", { name: "org", checks: [regexCheck("o")] });
    const ofB = await call(gateway, admin, "POST", "/v1/guardrails", {
      name: "b",
      workspace_id: wsB.id,
      checks: [regexCheck("b")],
    });
    const own = await call(gateway, keyA.key, "POST", "/v1/guardrails", { name: "a", checks: [regexCheck("a")] });
    expect(own.body.workspace_id).toBe(wsA.id);

    const listed = await call(gateway, keyA.key, "GET", "/v1/guardrails?limit=100");
    const ids = listed.body.data.map((item: any) => item.id);
    expect(ids).toContain(own.body.id);
    expect(ids).toContain(orgLevel.body.id);
    expect(ids).not.toContain(ofB.body.id);
    expect(listed.body.total).toBe(ids.length);

    expect((await call(gateway, keyA.key, "GET", `/v1/guardrails/${orgLevel.body.id}`)).status).toBe(200);
    expect((await call(gateway, keyA.key, "GET", `/v1/guardrails/${ofB.body.id}`)).status).toBe(404);
    const modify = await call(gateway, keyA.key, "PUT", `/v1/guardrails/${orgLevel.body.id}`, { name: "mine" });
    expect(modify).toMatchObject({ status: 403, body: { error: { code: "workspace_forbidden" } } });
    expect((await call(gateway, keyA.key, "DELETE", `/v1/guardrails/${orgLevel.body.id}`)).status).toBe(403);
    const escalate = await call(gateway, keyA.key, "POST", "/v1/guardrails", {
      name: "org from a workspace key",
      organisation_id: gateway.gateway.bootstrap.organisationId,
      checks: [regexCheck("x")],
    });
    expect(escalate).toMatchObject({ status: 403, body: { error: { code: "workspace_forbidden" } } });
    expect((await call(gateway, keyA.key, "PUT", `/v1/guardrails/${own.body.id}`, { name: "a2" })).status).toBe(200);
  });

  it("needs guardrails.* for a workspace's guardrails and organisation_guardrails.* for organisation-level ones", async () => {
    const organisationOnly = await createKey(gateway, admin, "organisation", "service", {
      name: "org-guardrails",
      scopes: ["organisation_guardrails.create", "organisation_guardrails.read", "organisation_guardrails.list"],
    });
    const workspaceOnly = await createKey(gateway, admin, "organisation", "service", {
      name: "ws-guardrails",
      scopes: ["guardrails.create", "guardrails.read", "guardrails.list"],
    });
    const neither = await createKey(gateway, admin, "organisation", "service", { name: "none", scopes: ["logs.list"] });
    const body = { name: "scoped", checks: [regexCheck("s")] };

    const orgLevel = await call(gateway, organisationOnly.key, "POST", "/v1/guardrails", body);
    expect(orgLevel.status).toBe(201);
    expect(orgLevel.body.workspace_id).toBeNull();
    const refused = await call(gateway, organisationOnly.key, "POST", "/v1/guardrails", {
      ...body,
      workspace_id: wsA.id,
    });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: "missing_scope" } } });
    expect(refused.body.error.message).toContain("guardrails.create");

    const inWorkspace = await call(gateway, workspaceOnly.key, "POST", "/v1/guardrails", {
      ...body,
      workspace_id: wsA.id,
    });
    expect(inWorkspace.status).toBe(201);
    expect((await call(gateway, workspaceOnly.key, "POST", "/v1/guardrails", body)).status).toBe(403);
    expect((await call(gateway, workspaceOnly.key, "GET", `/v1/guardrails/${orgLevel.body.id}`)).status).toBe(403);
    expect((await call(gateway, organisationOnly.key, "GET", `/v1/guardrails/${inWorkspace.body.id}`)).status).toBe(
      403,
    );

    // Lists show the levels the key may list.
    const orgList = await call(gateway, organisationOnly.key, "GET", "/v1/guardrails?limit=100");
    expect(orgList.body.data.every((item: any) => item.workspace_id === null)).toBe(true);
    const wsList = await call(gateway, workspaceOnly.key, "GET", "/v1/guardrails?limit=100");
    expect(wsList.body.data.length).toBeGreaterThan(0);
    expect(wsList.body.data.every((item: any) => item.workspace_id !== null)).toBe(true);

    for (const [method, path] of [
      ["GET", "/v1/guardrails"],
      ["POST", "/v1/guardrails"],
      ["GET", `/v1/guardrails/${orgLevel.body.id}`],
      ["DELETE", `/v1/guardrails/${orgLevel.body.id}`],
    ] as const) {
      const answer = await call(gateway, neither.key, method, path, method === "POST" ? body : undefined);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error.code).toBe("missing_scope");
    }
  });
});

describe("organisation defaults", () => {
  it("take organisation-level guardrails only, and a default cannot be deleted (409 naming the phase)", async () => {
    const pii = await call(gateway, admin, "POST", "/v1/guardrails", {
      name: "PII",
      slug: "default-pii",
      checks: [regexCheck("\\d{3}-\\d{2}-\\d{4}")],
    });
    const ofWorkspace = await call(gateway, admin, "POST", "/v1/guardrails", {
      name: "workspace only",
      slug: "workspace-only",
      workspace_id: wsA.id,
      checks: [regexCheck("w")],
    });

    const unknown = await call(gateway, admin, "PUT", "/v1/admin/organisation/defaults", {
      input_guardrails: ["default-pii", "no-such-guardrail"],
    });
    expect(unknown).toMatchObject({
      status: 400,
      body: { error: { param: "input_guardrails[1]", code: "guardrail_not_found" } },
    });
    const workspaceLevel = await call(gateway, admin, "PUT", "/v1/admin/organisation/defaults", {
      output_guardrails: [{ id: ofWorkspace.body.id }],
    });
    expect(workspaceLevel).toMatchObject({
      status: 400,
      body: { error: { param: "output_guardrails[0]", code: "guardrail_not_organisation_level" } },
    });

    const set = await call(gateway, admin, "PUT", "/v1/admin/organisation/defaults", {
      output_guardrails: ["default-pii", pii.body.id],
    });
    expect(set.status).toBe(200);
    const read = await call(gateway, admin, "GET", "/v1/admin/organisation/defaults");
    expect(read.body.output_guardrails).toEqual([{ id: pii.body.id, slug: "default-pii" }]);

    const refused = await call(gateway, admin, "DELETE", "/v1/guardrails/default-pii");
    expect(refused).toMatchObject({ status: 409, body: { error: { code: "guardrail_is_default" } } });
    expect(refused.body.error.message).toContain("output_guardrails");
    expect((await call(gateway, admin, "GET", "/v1/guardrails/default-pii")).status).toBe(200);

    await call(gateway, admin, "PUT", "/v1/admin/organisation/defaults", { output_guardrails: [] });
    expect((await call(gateway, admin, "DELETE", "/v1/guardrails/default-pii")).status).toBe(200);
  });
});

describe("secret check parameters", () => {
  it("are shown masked by GET, list and versions, kept on update, and never audited", async () => {
    // Stored as a webhook check saves it (core/inference/guardrails/checks: its definition arrives with the check library);
    // the control plane's views must not show the token whatever check holds it.
    const token = "Bearer whk-live-0123456789abcdef";
    const records = gateway.gateway.services.stores.records;
    const stored = await guardrailStore(records).create(gateway.gateway.bootstrap.organisationId, {
      name: "webhook",
      slug: "masked-webhook",
      checks: [
        {
          id: "default.webhook",
          parameters: {
            webhookURL: "https://hooks.example.com/guard",
            headers: { Authorization: token, "X-Team": "search" },
            api_key: "sk-hook-abcdefghijklmnop",
          },
          is_enabled: true,
        },
      ],
      actions: { deny: false, async: false, soft_deny_200: false, on_error: "open", timeout_ms: 5000 },
      status: "active",
    });

    const read: any = await portkey.guardrails.retrieve({ guardrail_id: stored.id });
    expect(read.checks[0].parameters).toEqual({
      webhookURL: "https://hooks.example.com/guard",
      headers: { Authorization: "Be********cdef", "X-Team": "********" },
      api_key: "sk********mnop",
    });
    const listed = await call(gateway, admin, "GET", "/v1/guardrails?limit=100");
    expect(listed.text).toContain("masked-webhook");
    expect(listed.text).not.toContain("0123456789abcdef");
    expect(listed.text).not.toContain("abcdefghijklmnop");

    const renamed = await call(gateway, admin, "PUT", "/v1/guardrails/masked-webhook", { name: "webhook 2" });
    expect(renamed.status).toBe(200);
    const versions = await call(gateway, admin, "GET", "/v1/guardrails/masked-webhook/versions");
    expect(versions.body.data[0].checks[0].parameters.headers.Authorization).toBe("Be********cdef");
    expect(versions.text).not.toContain("0123456789abcdef");
    const kept = await guardrailStore(records).get(gateway.gateway.bootstrap.organisationId, stored.id);
    expect(kept?.checks[0]?.parameters).toMatchObject({ headers: { Authorization: token } });

    const audit = await call(gateway, admin, "GET", `/v1/audit-logs?resource_type=guardrail&resource_id=${stored.id}`);
    expect(audit.body.data).toHaveLength(1);
    expect(audit.text).not.toContain("0123456789abcdef");
    expect(audit.text).not.toContain("abcdefghijklmnop");
  });
});

describe("audit", () => {
  it("audits create, update and delete with the guardrail's public view", async () => {
    const created = await call(gateway, admin, "POST", "/v1/guardrails", {
      name: "audited",
      checks: [regexCheck("a")],
    });
    await call(gateway, admin, "PUT", `/v1/guardrails/${created.body.id}`, { name: "audited 2" });
    await call(gateway, admin, "DELETE", `/v1/guardrails/${created.body.id}`);
    const entries = await call(
      gateway,
      admin,
      "GET",
      `/v1/audit-logs?resource_type=guardrail&resource_id=${created.body.id}`,
    );
    expect(entries.body.data.map((entry: any) => entry.action)).toEqual(["delete", "update", "create"]);
    expect(entries.body.data[1]).toMatchObject({ before: { name: "audited" }, after: { name: "audited 2" } });
  });
});
