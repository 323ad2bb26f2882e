import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { ensureOrganisation } from "../../../core/control/bootstrap.ts";
import { guardrailStore, onGuardrailsChanged } from "../../../core/control/guardrails-store.ts";
import * as guardrails from "../../../core/control/guardrails-service.ts";
import type { CheckSpec } from "../../../core/guardrails/types.ts";
import { type LocalStores, createLocalStores } from "../../../core/platform/local/local-stores.ts";
import { adminPrincipal, auditEntries, thrown, unique, workspacePrincipal } from "../../helpers/control-services.ts";

/**
 * The guardrail service called directly: secret check parameters masked in every view and kept when sent back
 * masked, the change signal the guardrail caches listen to, and where a new guardrail goes.
 *
 * The webhook check arrives with the check library; here a check with the same kind of parameters (a URL and
 * headers holding a token) stands in for it in the registry, validated by its own schema like any check.
 */
vi.mock("../../../core/guardrails/checks/registry.ts", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../../core/guardrails/checks/registry.ts")>();
  const parameters = z.object({ url: z.url(), headers: z.record(z.string(), z.string()).default({}) });
  return {
    ...actual,
    async checkSpecProblem(spec: CheckSpec) {
      if (spec.id !== "test.webhook") return actual.checkSpecProblem(spec);
      const parsed = parameters.safeParse(spec.parameters);
      if (!parsed.success) return { path: `parameters.${parsed.error.issues[0]!.path.join(".")}`, message: "bad" };
      spec.parameters = parsed.data;
      return undefined;
    },
  };
});

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

const deps = (traceId = "trace-guardrails") => ({ records: stores.records, traceId });
const admin = () => adminPrincipal(organisationId);
const TOKEN = "Bearer whk-live-0123456789abcdef";
const webhook = (headers: Record<string, string>) => ({
  id: "test.webhook",
  parameters: { url: "https://hooks.example.com/guard", headers },
  is_enabled: true,
});
const regex = (rule: string) => ({ id: "default.regexMatch", parameters: { rule }, is_enabled: true });

describe("guardrail service: secret parameters", () => {
  it("masks them in views and keeps the stored value when the masked value comes back", async () => {
    const slug = unique("hook");
    const created = await guardrails.createGuardrail(deps("trace-gr-create"), admin(), {
      name: "hook",
      slug,
      checks: [webhook({ Authorization: TOKEN })],
    });
    expect(created.checks[0]!.parameters).toEqual({
      url: "https://hooks.example.com/guard",
      headers: { Authorization: "Be********cdef" },
    });

    // Sent back exactly as GET showed it, with a second check added: the token stays.
    const shown = await guardrails.getGuardrail(deps(), admin(), { guardrail: slug });
    expect(shown.checks[0]!.is_enabled).toBe(true);
    const sentBack = shown.checks.map((check) => ({ ...check, is_enabled: check.is_enabled ?? true }));
    const updated = await guardrails.updateGuardrail(deps("trace-gr-update"), admin(), {
      guardrail: slug,
      changes: { checks: [...sentBack, regex("x")] },
    });
    expect(updated.version).toBe(2);
    const stored = await guardrailStore(stores.records).get(organisationId, slug);
    expect(stored!.checks[0]!.parameters).toEqual({
      url: "https://hooks.example.com/guard",
      headers: { Authorization: TOKEN },
    });

    for (const traceId of ["trace-gr-create", "trace-gr-update"]) {
      const [entry] = await auditEntries(stores.records, organisationId, traceId);
      expect(entry).toMatchObject({ resourceType: "guardrail", resourceId: created.id });
      expect(JSON.stringify(entry)).not.toContain("0123456789abcdef");
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
    // A new secret in its place is stored as sent.
    await guardrails.updateGuardrail(deps(), admin(), {
      guardrail: slug,
      changes: { checks: [webhook({ "X-Key": "another-secret-value-42" })] },
    });
    const stored = await guardrailStore(stores.records).get(organisationId, slug);
    expect(stored!.checks[0]!.parameters.headers).toEqual({ "X-Key": "another-secret-value-42" });
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
