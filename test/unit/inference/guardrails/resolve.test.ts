import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Principal } from "../../../../core/auth/principal.ts";
import { ensureOrganisation } from "../../../../core/control/organisation/bootstrap.ts";
import { sealCheckSecrets } from "../../../../core/control/guardrails/secrets.ts";
import {
  type GuardrailResource,
  guardrailStore,
  guardrailsChanged,
} from "../../../../core/control/guardrails/store.ts";
import { getOrganisation, updateOrganisation } from "../../../../core/control/organisation/store.ts";
import {
  guardrailFreeContext,
  guardrailsFor,
  mayHaveGuardrails,
  usableGuardrail,
} from "../../../../core/inference/guardrails/resolve.ts";
import { DEFAULT_CHECK_TIMEOUT_MS, type GuardrailActions } from "../../../../core/inference/guardrails/types.ts";
import type { RequestContext, Services } from "../../../../core/services.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import { type LocalStores, createLocalStores } from "../../../../core/platform/local/local-stores.ts";
import { type InheritedSettings, compileConfig } from "../../../../core/inference/routing/config.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";
import { adminPrincipal, unique, workspacePrincipal } from "../../../helpers/control-services.ts";

/**
 * Which guardrails a request runs: the organisation's defaults for the caller's workspace (minus exclusions),
 * then the config's; saved guardrails by id or slug within the caller's reach; the caches in front of the
 * store and their invalidation.
 */

let dataDir: string;
let stores: LocalStores;
let organisationId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "gateway-guardrail-resolve-"));
  stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  ({ organisationId } = await ensureOrganisation(stores.records));
});

afterAll(async () => {
  await stores?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const actions: GuardrailActions = {
  deny: true,
  async: false,
  soft_deny_200: false,
  on_error: "open",
  timeout_ms: DEFAULT_CHECK_TIMEOUT_MS,
};

async function saveGuardrail(fields: Partial<GuardrailResource> = {}): Promise<GuardrailResource> {
  return guardrailStore(stores.records).create(organisationId, {
    name: "Card numbers",
    slug: unique("cards"),
    checks: [{ id: "default.regexMatch", parameters: { rule: "\\d{16}", not: true } }],
    actions,
    status: "active",
    ...fields,
  });
}

/** Sets the organisation's defaults and exclusions (and tells the caches, as the control plane does). */
async function setDefaults(
  defaults: { input?: GuardrailResource[]; output?: GuardrailResource[] },
  exclusions: { input?: string[]; output?: string[] } = {},
): Promise<void> {
  const refs = (list: GuardrailResource[] = []) =>
    list.map((guardrail) => ({ id: guardrail.id, slug: guardrail.slug ?? null }));
  const current = await getOrganisation(stores.records, organisationId);
  await updateOrganisation(stores.records, current, {
    defaults: { input_guardrails: refs(defaults.input), output_guardrails: refs(defaults.output) },
    exclusions: { input_guardrails: exclusions.input ?? [], output_guardrails: exclusions.output ?? [] },
  });
  guardrailsChanged(organisationId);
}

function context(principal: Principal = adminPrincipal(organisationId)): RequestContext {
  return {
    traceId: "trace-resolve",
    params: {},
    principal,
    services: { stores: { records: stores.records, secrets: stores.secrets } } as unknown as Services,
    signal: new AbortController().signal,
    waitUntil: () => {},
    startedAt: 0,
  };
}

const settingsOf = (config: Record<string, unknown>): InheritedSettings =>
  compileConfig({ provider: "openai", ...config }, parseTrustedHosts([])).settings;

const ids = (definitions: Array<{ id: string }>) => definitions.map((definition) => definition.id);

beforeEach(() => setDefaults({}));

describe("guardrailsFor", () => {
  it("runs the organisation's defaults first, then the config's references and inline guardrails, in order", async () => {
    const first = await saveGuardrail();
    const second = await saveGuardrail({ name: "Second" });
    const byDefault = await saveGuardrail({ name: "Default" });
    await setDefaults({ input: [byDefault] });
    const settings = settingsOf({
      input_guardrails: [second.slug, { "default.regexMatch": { rule: "secret" }, deny: true }, first.id],
      output_guardrails: [first.slug],
    });
    const input = await guardrailsFor(context(), settings, "input");
    expect(ids(input)).toEqual([byDefault.id, second.id, "inline:config.input_guardrails[1]", first.id]);
    expect(input[1]).toMatchObject({ id: second.id, slug: second.slug, name: "Second", version: 1, actions });
    expect(ids(await guardrailsFor(context(), settings, "output"))).toEqual([first.id]);
  });

  it("runs a guardrail named twice once, and skips archived ones", async () => {
    const shared = await saveGuardrail();
    const archived = await saveGuardrail({ status: "archived" });
    await setDefaults({ input: [shared] });
    const settings = settingsOf({ input_guardrails: [shared.id, archived.id, shared.slug] });
    expect(ids(await guardrailsFor(context(), settings, "input"))).toEqual([shared.id]);
  });

  it("answers 400 guardrail_not_found naming an unknown reference", async () => {
    const settings = compileConfig(
      { strategy: { mode: "fallback" }, targets: [{ provider: "openai", output_guardrails: ["no-such-guardrail"] }] },
      parseTrustedHosts([]),
    );
    const leafSettings = settings.kind === "strategy" ? settings.targets[0]!.settings : settings.settings;
    const error = await guardrailsFor(context(), leafSettings, "output").catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({
      status: 400,
      code: "guardrail_not_found",
      param: "config.targets[0].output_guardrails[0]",
    });
    expect((error as HttpError).message).toContain("no-such-guardrail");
  });

  it("a workspace key may use its workspace's and organisation-level guardrails, not another workspace's", async () => {
    const own = await saveGuardrail({ workspaceId: "ws_own" });
    const organisationLevel = await saveGuardrail();
    const foreign = await saveGuardrail({ workspaceId: "ws_other" });
    const key = context(workspacePrincipal(organisationId, "ws_own"));
    const allowed = settingsOf({ input_guardrails: [own.slug, organisationLevel.slug] });
    expect(ids(await guardrailsFor(key, allowed, "input"))).toEqual([own.id, organisationLevel.id]);
    for (const ref of [foreign.id, foreign.slug!]) {
      await expect(guardrailsFor(key, settingsOf({ input_guardrails: [ref] }), "input")).rejects.toMatchObject({
        status: 400,
        code: "guardrail_not_found",
      });
    }
    // An organisation key reaches every workspace's.
    expect(ids(await guardrailsFor(context(), settingsOf({ input_guardrails: [foreign.id] }), "input"))).toEqual([
      foreign.id,
    ]);
  });

  it("leaves the defaults out for excluded workspaces, per phase", async () => {
    const input = await saveGuardrail();
    const output = await saveGuardrail();
    await setDefaults({ input: [input], output: [output] }, { input: ["ws_excluded"] });
    const excluded = context(workspacePrincipal(organisationId, "ws_excluded"));
    expect(await guardrailsFor(excluded, undefined, "input")).toEqual([]);
    expect(ids(await guardrailsFor(excluded, undefined, "output"))).toEqual([output.id]);
    expect(
      ids(await guardrailsFor(context(workspacePrincipal(organisationId, "ws_other")), undefined, "input")),
    ).toEqual([input.id]);
  });

  it("skips a default whose guardrail no longer exists, with one warning", async () => {
    const gone = await saveGuardrail();
    const kept = await saveGuardrail();
    await setDefaults({ input: [gone, kept] });
    await guardrailStore(stores.records).delete(gone);
    guardrailsChanged(organisationId);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(ids(await guardrailsFor(context(), undefined, "input"))).toEqual([kept.id]);
    expect(ids(await guardrailsFor(context(), undefined, "input"))).toEqual([kept.id]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toContain(gone.id);
    warn.mockRestore();
  });

  it("serves saved guardrails from the cache until the organisation's guardrails change", async () => {
    const guardrail = await saveGuardrail();
    const settings = settingsOf({ input_guardrails: [guardrail.id] });
    const [before] = await guardrailsFor(context(), settings, "input");
    // Same definition object while cached: the runner keeps parsed parameters per check object.
    expect((await guardrailsFor(context(), settings, "input"))[0]).toBe(before);

    const updated = await guardrailStore(stores.records).update(guardrail, { actions: { ...actions, deny: false } });
    expect((await guardrailsFor(context(), settings, "input"))[0]).toBe(before);
    guardrailsChanged(organisationId);
    const [after] = await guardrailsFor(context(), settings, "input");
    expect(after).toMatchObject({ version: updated.version, actions: { deny: false } });
  });
});

describe("sealed secret parameters", () => {
  const TOKEN = "Bearer resolve-hook-4c8e2a6f0b";
  const hook = (token: string) => [
    { id: "default.webhook", parameters: { webhookURL: "https://hooks.example.com/g", headers: { "X-Auth": token } } },
  ];

  it("are opened for the runner once per guardrail version, the stored record staying sealed", async () => {
    const guardrail = await saveGuardrail({ checks: await sealCheckSecrets(stores.secrets, hook(TOKEN)) });
    const decrypt = vi.spyOn(stores.secrets, "decrypt");
    const settings = settingsOf({ input_guardrails: [guardrail.slug] });
    const [definition] = await guardrailsFor(context(), settings, "input");
    expect(definition!.checks).toEqual(hook(TOKEN));
    expect(
      JSON.stringify((await guardrailStore(stores.records).get(organisationId, guardrail.id))!.checks),
    ).not.toContain(TOKEN);
    expect(await usableGuardrail(context(), guardrail.id)).toEqual(definition);
    // The store is read again (the organisation's cache dropped) but the version is the same: not opened again.
    guardrailsChanged(organisationId);
    expect((await guardrailsFor(context(), settings, "input"))[0]).toBe(definition);
    expect(decrypt).toHaveBeenCalledTimes(1);

    const rotated = await guardrailStore(stores.records).update(guardrail, {
      checks: await sealCheckSecrets(stores.secrets, hook("Bearer rotated-hook-7d1f3b9e5a")),
    });
    guardrailsChanged(organisationId);
    const [after] = await guardrailsFor(context(), settings, "input");
    expect(after).toMatchObject({ version: rotated.version, checks: hook("Bearer rotated-hook-7d1f3b9e5a") });
    expect(decrypt).toHaveBeenCalledTimes(2);
    decrypt.mockRestore();
  });

  it("saved in plaintext before (legacy) are used as they are", async () => {
    const legacy = await saveGuardrail({ checks: hook(TOKEN) });
    expect((await usableGuardrail(context(), legacy.id))!.checks).toEqual(hook(TOKEN));
  });

  it("that cannot be opened fail the lookup, and the next lookup tries again", async () => {
    const { AesGcmSecrets } = await import("../../../../core/store/aes-gcm.ts");
    const foreign = new AesGcmSecrets(new Uint8Array(32).fill(7));
    const broken = await saveGuardrail({ checks: await sealCheckSecrets(foreign, hook(TOKEN)) });
    await expect(usableGuardrail(context(), broken.id)).rejects.toThrow(/decrypt/);
    const fixed = await guardrailStore(stores.records).update(broken, {
      checks: await sealCheckSecrets(stores.secrets, hook(TOKEN)),
    });
    expect(await usableGuardrail(context(), broken.id)).toMatchObject({ version: fixed.version, checks: hook(TOKEN) });
  });
});

describe("mayHaveGuardrails", () => {
  it("is false without defaults or config guardrails, and then reads nothing from the store", async () => {
    expect(await mayHaveGuardrails(context(), settingsOf({}))).toBe(false);
    const get = vi.spyOn(stores.records, "get");
    expect(await mayHaveGuardrails(context(), settingsOf({}))).toBe(false);
    expect(await guardrailsFor(context(), settingsOf({}), "input")).toEqual([]);
    expect(get).not.toHaveBeenCalled();
    get.mockRestore();
  });

  it("is true when the config carries guardrails or the workspace has defaults", async () => {
    expect(await mayHaveGuardrails(context(), settingsOf({ output_guardrails: ["anything"] }))).toBe(true);
    const guardrail = await saveGuardrail();
    await setDefaults({ output: [guardrail] }, { output: ["ws_excluded"] });
    expect(await mayHaveGuardrails(context(), undefined)).toBe(true);
    expect(await mayHaveGuardrails(context(workspacePrincipal(organisationId, "ws_excluded")), undefined)).toBe(false);
  });
});

describe("calls made for checks", () => {
  it("run no guardrails of their own (no recursion)", async () => {
    const guardrail = await saveGuardrail();
    await setDefaults({ input: [guardrail] });
    const settings = settingsOf({ input_guardrails: [guardrail.id] });
    const sub = guardrailFreeContext(context(), { path: "/v1/chat/completions" });
    expect(sub.path).toBe("/v1/chat/completions");
    expect(await mayHaveGuardrails(sub, settings)).toBe(false);
    expect(await guardrailsFor(sub, settings, "input")).toEqual([]);
    expect(ids(await guardrailsFor(context(), settings, "input"))).toEqual([guardrail.id]);
  });
});
