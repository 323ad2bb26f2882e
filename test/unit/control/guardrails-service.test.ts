import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureOrganisation } from "../../../core/control/organisation/bootstrap.ts";
import { openCheckSecrets } from "../../../core/control/guardrails/secrets.ts";
import { guardrailStore, onGuardrailsChanged } from "../../../core/control/guardrails/store.ts";
import * as guardrails from "../../../core/control/guardrails/service.ts";
import type { CheckSpec } from "../../../core/inference/guardrails/types.ts";
import { type LocalStores, createLocalStores } from "../../../core/platform/local/local-stores.ts";
import { adminPrincipal, auditEntries, thrown, unique, workspacePrincipal } from "../../helpers/control-services.ts";

/**
 * The guardrail service called directly: secret check parameters (a webhook's headers) stored sealed, the
 * guardrail's and its versions', masked in every view and kept when sent back masked; the change signal the
 * guardrail caches listen to, and where a new guardrail goes.
 */

let dataDir: string;
let stores: LocalStores;
let organisationId: string;
let defaultWorkspaceId: string;
const changes: string[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "gateway-guardrail-services-"));
  stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  ({ organisationId, defaultWorkspaceId } = await ensureOrganisation(stores.records));
  onGuardrailsChanged((changed) => changes.push(changed));
});

afterAll(async () => {
  await stores?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const deps = (traceId = "trace-guardrails") => ({ records: stores.records, secrets: stores.secrets, traceId });
const admin = () => adminPrincipal(organisationId);
const TOKEN = "Bearer whk-live-0123456789abcdef";
const HOOK_URL = "https://hooks.example.com/guard";
const webhook = (headers: Record<string, string>) => ({
  id: "default.webhook",
  parameters: { webhookURL: HOOK_URL, headers },
  is_enabled: true,
});
const regex = (rule: string) => ({ id: "default.regexMatch", parameters: { rule }, is_enabled: true });
/** Checks as a view shows them, sent back as the create/update schema reads them. */
const sentBack = (checks: CheckSpec[]) => checks.map((check) => ({ ...check, is_enabled: check.is_enabled ?? true }));

/** The stored guardrail straight from the Records store, and its checks as the data plane opens them. */
async function storedGuardrail(slug: string) {
  const stored = (await guardrailStore(stores.records).get(organisationId, slug))!;
  return { stored, opened: await openCheckSecrets(stores.secrets, stored.checks) };
}

describe("guardrail service: secret parameters", () => {
  it("stores them sealed, masks them in views, and keeps the stored value when the masked value comes back", async () => {
    const slug = unique("hook");
    const created = await guardrails.createGuardrail(deps("trace-gr-create"), admin(), {
      name: "hook",
      slug,
      checks: [webhook({ Authorization: TOKEN, "X-Team": "a" })],
    });
    expect(created.checks[0]!.parameters).toEqual({
      webhookURL: HOOK_URL,
      headers: { Authorization: "Be********cdef", "X-Team": "********" },
      timeout: 3000,
    });
    const first = await storedGuardrail(slug);
    expect(JSON.stringify(first.stored)).not.toContain("0123456789abcdef");
    expect(first.stored.checks[0]!.parameters.headers).toEqual({
      Authorization: { $sealed: expect.any(String), hint: "Be********cdef" },
      "X-Team": { $sealed: expect.any(String), hint: "********" },
    });
    expect(first.opened[0]!.parameters.headers).toEqual({ Authorization: TOKEN, "X-Team": "a" });

    // Sent back exactly as GET showed it, with a second check added: the token stays.
    const shown = await guardrails.getGuardrail(deps(), admin(), { guardrail: slug });
    expect(shown.checks).toEqual(created.checks);
    const updated = await guardrails.updateGuardrail(deps("trace-gr-update"), admin(), {
      guardrail: slug,
      changes: { checks: [...sentBack(shown.checks), regex("x")] },
    });
    expect(updated.version).toBe(2);
    const second = await storedGuardrail(slug);
    expect(JSON.stringify(second.stored)).not.toContain("0123456789abcdef");
    expect(second.opened[0]!.parameters).toEqual({
      webhookURL: HOOK_URL,
      headers: { Authorization: TOKEN, "X-Team": "a" },
      timeout: 3000,
    });

    // Versions are stored sealed and shown as hints.
    for (const version of [1, 2]) {
      const key = { pk: `GUARDRAIL#${created.id}`, sk: `VERSION#${String(version).padStart(8, "0")}` };
      const item = await stores.records.get(key.pk, key.sk);
      expect(JSON.stringify(item)).toContain("$sealed");
      expect(JSON.stringify(item)).not.toContain("0123456789abcdef");
      const view = await guardrails.getGuardrail(deps(), admin(), { guardrail: slug, version });
      expect(view.checks[0]!.parameters.headers).toEqual({ Authorization: "Be********cdef", "X-Team": "********" });
    }
    const versions = await guardrails.listGuardrailVersions(deps(), admin(), { guardrail: slug, page: { limit: 10 } });
    expect(JSON.stringify(versions)).not.toContain("0123456789abcdef");
    expect(JSON.stringify(versions)).not.toContain("$sealed");

    for (const traceId of ["trace-gr-create", "trace-gr-update"]) {
      const [entry] = await auditEntries(stores.records, organisationId, traceId);
      expect(entry).toMatchObject({ resourceType: "guardrail", resourceId: created.id });
      expect(JSON.stringify(entry)).not.toContain("0123456789abcdef");
      expect(JSON.stringify(entry)).not.toContain("$sealed");
    }
  });

  it("refuses a masked value with nothing stored behind it (a create, or another place)", async () => {
    const onCreate = await thrown(
      guardrails.createGuardrail(deps(), admin(), {
        name: "copied",
        checks: [webhook({ Authorization: "Be********cdef" })],
      }),
    );
    expect(onCreate).toMatchObject({
      kind: "invalid",
      param: "checks[0].parameters.headers.Authorization",
      code: "masked_secret",
    });

    const slug = unique("hook");
    await guardrails.createGuardrail(deps(), admin(), { name: "hook", slug, checks: [webhook({ "X-Key": TOKEN })] });
    const moved = await thrown(
      guardrails.updateGuardrail(deps(), admin(), {
        guardrail: slug,
        changes: { checks: [regex("first"), webhook({ "X-Key": "Be********cdef" })] },
      }),
    );
    expect(moved).toMatchObject({ kind: "invalid", param: "checks[1].parameters.headers.X-Key" });
    // A new secret in its place is stored (sealed) as sent.
    await guardrails.updateGuardrail(deps(), admin(), {
      guardrail: slug,
      changes: { checks: [webhook({ "X-Key": "another-secret-value-42" })] },
    });
    const { stored, opened } = await storedGuardrail(slug);
    expect(JSON.stringify(stored)).not.toContain("another-secret-value-42");
    expect(opened[0]!.parameters.headers).toEqual({ "X-Key": "another-secret-value-42" });
  });

  it("validates the checks on plaintext: a sealed-looking value sent by a client is data, not a stored secret", async () => {
    const slug = unique("hook");
    await guardrails.createGuardrail(deps(), admin(), { name: "hook", slug, checks: [webhook({ "X-Key": TOKEN })] });
    const { stored } = await storedGuardrail(slug);
    // Even the very ciphertext stored for this guardrail, sent back, is not a header value.
    const copied = await thrown(
      guardrails.updateGuardrail(deps(), admin(), {
        guardrail: slug,
        changes: {
          checks: sentBack(stored.checks),
        },
      }),
    );
    expect(copied).toMatchObject({ kind: "invalid", param: "checks[0].parameters.headers.X-Key" });
  });

  it("reads a guardrail saved in plaintext before (legacy) as it is, and seals it when its checks are saved", async () => {
    const legacy = await guardrailStore(stores.records).create(organisationId, {
      name: "legacy",
      slug: unique("legacy"),
      checks: [{ id: "default.webhook", parameters: { webhookURL: HOOK_URL, headers: { "X-Key": TOKEN } } }],
      actions: { deny: false, async: false, soft_deny_200: false, on_error: "open", timeout_ms: 5000 },
      status: "active",
    });
    const shown = await guardrails.getGuardrail(deps(), admin(), { guardrail: legacy.id });
    expect(shown.checks[0]!.parameters.headers).toEqual({ "X-Key": "Be********cdef" });
    expect((await openCheckSecrets(stores.secrets, legacy.checks))[0]!.parameters.headers).toEqual({ "X-Key": TOKEN });

    await guardrails.updateGuardrail(deps(), admin(), {
      guardrail: legacy.id,
      changes: { checks: sentBack(shown.checks) },
    });
    const { stored, opened } = await storedGuardrail(legacy.id);
    expect(JSON.stringify(stored)).not.toContain("0123456789abcdef");
    expect(opened[0]!.parameters.headers).toEqual({ "X-Key": TOKEN });
  });
});

describe("guardrail service: changes and places", () => {
  it("tells the guardrail caches about every create, update and delete", async () => {
    changes.length = 0;
    const created = await guardrails.createGuardrail(deps(), admin(), { name: "signal", checks: [regex("s")] });
    await guardrails.updateGuardrail(deps(), admin(), { guardrail: created.id, changes: { name: "signal 2" } });
    await guardrails.deleteGuardrail(deps(), admin(), { guardrail: created.id });
    expect(changes).toEqual([organisationId, organisationId, organisationId]);
  });

  it("puts a workspace key's guardrails in its workspace and refuses it the organisation level", async () => {
    const key = workspacePrincipal(organisationId, defaultWorkspaceId);
    const own = await guardrails.createGuardrail(deps(), key, { name: "own", checks: [regex("o")] });
    expect(own.workspace_id).toBe(defaultWorkspaceId);
    const refused = await thrown(
      guardrails.createGuardrail(deps(), key, { name: "org", organisation_id: organisationId, checks: [regex("o")] }),
    );
    expect(refused).toMatchObject({ kind: "forbidden", code: "workspace_forbidden" });
    const otherOrganisation = await thrown(
      guardrails.createGuardrail(deps(), admin(), { name: "x", organisation_id: "org_other", checks: [regex("o")] }),
    );
    expect(otherOrganisation).toMatchObject({ kind: "forbidden", code: "organisation_forbidden" });
    const byAdmin = await guardrails.createGuardrail(deps(), admin(), {
      name: "in the default workspace",
      workspace_id: "default",
      checks: [regex("d")],
    });
    expect(byAdmin.workspace_id).toBe(defaultWorkspaceId);
  });

  it("pages by cursor and by page number over the same newest-first order, with the total", async () => {
    const key = workspacePrincipal(organisationId, defaultWorkspaceId, ["guardrails.list", "guardrails.create"]);
    const all = await guardrails.listGuardrails(deps(), key, { limit: 100 });
    expect(all.total).toBe(all.items.length);
    expect(all.items.every((item) => item.workspace_id === defaultWorkspaceId)).toBe(true);
    const first = await guardrails.listGuardrails(deps(), key, { limit: 1 });
    const second = await guardrails.listGuardrails(deps(), key, { limit: 1, cursor: first.cursor });
    const byNumber = await guardrails.listGuardrails(deps(), key, { limit: 1, offset: 1 });
    expect(second.items[0]!.id).toBe(all.items[1]!.id);
    expect(byNumber.items[0]!.id).toBe(all.items[1]!.id);
    const badCursor = await thrown(guardrails.listGuardrails(deps(), key, { limit: 1, cursor: "zzz" }));
    expect(badCursor).toMatchObject({ kind: "invalid", param: "cursor" });
  });
});
