import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import * as apiKeys from "../../../core/control/api-keys/service.ts";
import { ensureOrganisation } from "../../../core/control/organisation/bootstrap.ts";
import * as configs from "../../../core/control/configs/service.ts";
import { Conflict, Forbidden, Invalid, NotFound } from "../../../core/control/errors.ts";
import { integrationStore } from "../../../core/control/integrations/store.ts";
import * as integrations from "../../../core/control/integrations/service.ts";
import { INTEGRATIONS } from "../../../core/control/integrations/service.ts";
import { sealCredentials } from "../../../core/control/credentials/credentials.ts";
import { ResourceStore } from "../../../core/control/resource-store.ts";
import { resolveSavedProvider } from "../../../core/control/saved-resources.ts";
import * as virtualKeys from "../../../core/control/virtual-keys/service.ts";
import * as workspaces from "../../../core/control/workspaces/service.ts";
import { type LocalStores, createLocalStores } from "../../../core/platform/local/local-stores.ts";
import { adminPrincipal, auditEntries, thrown, unique, workspacePrincipal } from "../../helpers/control-services.ts";
import { parseTrustedHosts } from "../../../core/security/custom-host.ts";

/**
 * The saved-provider services (integrations, virtual keys as their alias, configs) and the API-key service
 * called directly with a principal and plain input, no HTTP: results, domain errors, audit entries, and the
 * migration of virtual keys stored before they became integrations.
 */

let dataDir: string;
let stores: LocalStores;
let organisationId: string;
let teamA: string;
let teamB: string;

const PROVIDER_KEY = "sk-provider-secret-0123456789";

const admin = () => adminPrincipal(organisationId);
const workspaceKey = (workspaceId: string, scopes = ["*"]) => workspacePrincipal(organisationId, workspaceId, scopes);

const deps = (traceId = "trace-saved") => ({
  records: stores.records,
  secrets: stores.secrets,
  trustedHosts: parseTrustedHosts([]),
  traceId,
  organisationChanged: vi.fn(),
  organisationSettings: async () => ({}),
  forgetKey: vi.fn(),
  policyChanged: vi.fn(),
});

/** A body reader that must not run: the service decides before reading it. */
const unread = () => vi.fn(async () => expect.fail("the input was read before the access check")) as never;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "gateway-saved-services-"));
  stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  ({ organisationId } = await ensureOrganisation(stores.records));
  teamA = (await workspaces.createWorkspace(deps(), admin(), { name: "A", slug: unique("team-a") })).id;
  teamB = (await workspaces.createWorkspace(deps(), admin(), { name: "B", slug: unique("team-b") })).id;
});

afterAll(async () => {
  await stores?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const newIntegration = (slug: string, extra: Partial<integrations.IntegrationCreateInput> = {}) => ({
  name: "OpenAI",
  slug,
  provider: "openai",
  key: PROVIDER_KEY,
  ...extra,
});

describe("integrations service", () => {
  it("creates with the key sealed and masked, and audits without the secret", async () => {
    const slug = unique("openai");
    const view = await integrations.createIntegration(deps("trace-int"), admin(), newIntegration(slug), INTEGRATIONS);
    expect(view).toMatchObject({ object: "integration", slug, ai_provider_id: "openai", workspace_id: null });
    expect(view.masked_api_key).toMatch(/^sk\*+6789$/);
    const stored = await integrationStore(stores.records).get(organisationId, slug);
    expect(JSON.stringify(stored)).not.toContain(PROVIDER_KEY);
    const [entry] = await auditEntries(stores.records, organisationId, "trace-int");
    expect(entry).toMatchObject({ action: "create", resourceType: "integration", resourceId: view.id });
    expect(JSON.stringify(entry)).not.toContain(PROVIDER_KEY);
  });

  it("answers Invalid naming the field for an unknown provider", async () => {
    const error = await thrown(
      integrations.createIntegration(deps(), admin(), newIntegration(unique("x"), { provider: "nope" }), INTEGRATIONS),
    );
    expect(error).toBeInstanceOf(Invalid);
    expect(error).toMatchObject({ param: "ai_provider_id", code: "invalid_provider" });
  });

  it("hides an organisation-level integration from workspaces until shared; only admins share it", async () => {
    const slug = unique("shared");
    await integrations.createIntegration(deps(), admin(), newIntegration(slug), INTEGRATIONS);
    const ref = { integration: slug };

    const hidden = await thrown(integrations.getIntegration(deps(), workspaceKey(teamA), ref, INTEGRATIONS));
    expect(hidden).toBeInstanceOf(NotFound);
    expect(hidden).toMatchObject({ code: "integration_not_found", message: `No integration '${slug}'.` });
    const changes = unread();
    await thrown(integrations.updateIntegration(deps(), workspaceKey(teamA), { ...ref, changes }, INTEGRATIONS));
    expect(changes).not.toHaveBeenCalled();

    const notAdmin = await thrown(
      integrations.updateIntegrationWorkspaces(deps(), workspaceKey(teamA), { ...ref, access: unread() }, INTEGRATIONS),
    );
    expect(notAdmin).toBeInstanceOf(Forbidden);
    expect(notAdmin).toMatchObject({ code: "admin_required" });

    const access = { workspace_ids: [teamA] };
    const shared = await integrations.updateIntegrationWorkspaces(deps(), admin(), { ...ref, access }, INTEGRATIONS);
    expect(shared.data).toEqual([{ id: teamA, object: "integration.workspace", enabled: true }]);
    expect(await integrations.getIntegration(deps(), workspaceKey(teamA), ref, INTEGRATIONS)).toMatchObject({ slug });
    // Usable, but not the workspace's to change.
    const readOnly = await thrown(
      integrations.updateIntegration(deps(), workspaceKey(teamA), { ...ref, changes: { name: "x" } }, INTEGRATIONS),
    );
    expect(readOnly).toBeInstanceOf(Forbidden);
    expect(readOnly).toMatchObject({ code: "workspace_forbidden" });
    await thrown(integrations.getIntegration(deps(), workspaceKey(teamB), ref, INTEGRATIONS));
  });

  it("refuses to share a workspace's own integration", async () => {
    const slug = unique("own");
    await integrations.createIntegration(deps(), workspaceKey(teamA), newIntegration(slug), INTEGRATIONS);
    const error = await thrown(
      integrations.updateIntegrationWorkspaces(
        deps(),
        admin(),
        { integration: slug, access: { workspace_ids: [teamB] } },
        INTEGRATIONS,
      ),
    );
    expect(error).toBeInstanceOf(Forbidden);
    expect(error).toMatchObject({ code: "workspace_integration" });
  });

  it("answers Conflict for a taken slug", async () => {
    const slug = unique("dup");
    await integrations.createIntegration(deps(), admin(), newIntegration(slug), INTEGRATIONS);
    const error = await thrown(integrations.createIntegration(deps(), admin(), newIntegration(slug), INTEGRATIONS));
    expect(error).toBeInstanceOf(Conflict);
    expect(error).toMatchObject({ param: "slug" });
  });
});

describe("virtual keys: an alias over integrations", () => {
  it("stores one integration record, shown in the legacy shape and usable by slug", async () => {
    const created = await virtualKeys.createVirtualKey(deps("trace-vk"), admin(), {
      name: "Legacy Azure",
      provider: "azure-openai",
      key: PROVIDER_KEY,
      resourceName: "my-resource",
      deploymentName: "gpt4o",
      apiVersion: "2024-06-01",
    });
    expect(created).toMatchObject({
      object: "virtual-key",
      provider: "azure-openai",
      status: "active",
      model_config: { resource_name: "my-resource", deployment_id: "gpt4o", api_version: "2024-06-01" },
    });
    expect(created.id).toMatch(/^vk_/);
    expect(created.slug).toMatch(/^legacy-azure-/);
    // The same record through the integration service, and as a saved provider.
    const asIntegration = await integrations.getIntegration(
      deps(),
      admin(),
      { integration: created.slug },
      INTEGRATIONS,
    );
    expect(asIntegration).toMatchObject({ id: created.id, object: "integration", ai_provider_id: "azure-openai" });
    const target = await resolveSavedProvider(created.slug, {
      principal: admin(),
      services: { stores, trustedHosts: parseTrustedHosts([]) },
    });
    expect(target).toMatchObject({
      provider: "azure-openai",
      apiKey: PROVIDER_KEY,
      azure: { resourceName: "my-resource" },
    });
    const [entry] = await auditEntries(stores.records, organisationId, "trace-vk");
    expect(entry).toMatchObject({ action: "create", resourceType: "virtual_key", resourceId: created.id });

    const unknown = await thrown(virtualKeys.getVirtualKey(deps(), admin(), { slug: "no-such-key" }));
    expect(unknown).toBeInstanceOf(NotFound);
    expect(unknown).toMatchObject({ code: "virtual_key_not_found" });
  });

  it("migrates a virtual key stored before (kind VIRTUALKEY) on first read, keeping its id, slug and key", async () => {
    const legacy = new ResourceStore<any>(stores.records, "VIRTUALKEY", "vk");
    const credentials = await sealCredentials(stores.secrets, "openai", {}, { apiKey: PROVIDER_KEY });
    const slugs = [unique("old-one"), unique("old-two"), unique("old-three")];
    const [one, two, three] = await Promise.all(
      slugs.map((slug) =>
        legacy.create(organisationId, { slug, name: slug, status: "active", credentials, note: "kept" }),
      ),
    );

    // A lookup by slug (the routes, x-gateway-virtual-key) migrates that one.
    const view = await virtualKeys.getVirtualKey(deps(), admin(), { slug: one.slug });
    expect(view).toMatchObject({
      id: one.id,
      slug: one.slug,
      note: "kept",
      masked_api_key: expect.stringMatching(/^sk/),
    });
    expect(view.created_at).toBe(new Date(one.createdAt * 1000).toISOString());
    expect(await legacy.get(organisationId, one.slug)).toBeUndefined();
    expect((await integrationStore(stores.records).get(organisationId, one.id))?.slug).toBe(one.slug);

    // The data plane's lookup migrates too.
    const caller = { principal: admin(), services: { stores, trustedHosts: parseTrustedHosts([]) } };
    expect(await resolveSavedProvider(two.slug, caller)).toMatchObject({ provider: "openai", apiKey: PROVIDER_KEY });
    expect(await legacy.get(organisationId, two.id)).toBeUndefined();

    // A list migrates the rest, so it shows them. A legacy key kept no workspace access: still none.
    const page = await virtualKeys.listVirtualKeys(deps(), admin(), { limit: 100 });
    expect(page.items.map((item) => item.id)).toEqual(expect.arrayContaining([one.id, two.id, three.id]));
    expect(await legacy.get(organisationId, three.id)).toBeUndefined();
    await thrown(virtualKeys.getVirtualKey(deps(), workspaceKey(teamA), { slug: three.slug }));
  });
});

describe("configs service", () => {
  const config = { strategy: { mode: "fallback" }, targets: [{ provider: "openai", api_key: PROVIDER_KEY }] };

  it("seals credentials, shows them masked, and answers Invalid for a config that is not JSON", async () => {
    const view = await configs.createConfig(deps(), admin(), { name: "Fallback", slug: unique("cfg"), config });
    expect(JSON.stringify(view)).not.toContain(PROVIDER_KEY);
    const error = await thrown(configs.createConfig(deps(), admin(), { name: "Bad", config: "{nope" }));
    expect(error).toBeInstanceOf(Invalid);
    expect(error).toMatchObject({ param: "config", code: "invalid_config" });
  });

  it("answers NotFound for another workspace's config, before reading any input", async () => {
    const slug = unique("team-a-cfg");
    await configs.createConfig(deps(), workspaceKey(teamA), { name: "A's", slug, config });
    const version = unread();
    const error = await thrown(configs.getConfig(deps(), workspaceKey(teamB), { config: slug, version }));
    expect(error).toBeInstanceOf(NotFound);
    expect(error).toMatchObject({ code: "config_not_found" });
    expect(version).not.toHaveBeenCalled();
    const missing = await thrown(configs.getConfig(deps(), workspaceKey(teamA), { config: slug, version: 9 }));
    expect(missing).toMatchObject({ code: "version_not_found" });
  });
});

describe("API keys service", () => {
  it("grants only scopes the creator holds, and creates with an audit entry but no secret in it", async () => {
    const weak = workspaceKey(teamA, ["completions.write", "api_keys.create"]);
    const body = { name: "more", scopes: ["completions.write", "logs.list"], workspace_id: teamA };
    const escalation = await thrown(apiKeys.createKey(deps(), weak, { type: "workspace", subType: "service", body }));
    expect(escalation).toBeInstanceOf(Forbidden);
    expect(escalation).toMatchObject({ code: "scope_escalation" });

    const created = await apiKeys.createKey(deps("trace-key"), weak, {
      type: "workspace",
      subType: "service",
      body: { name: "ok", scopes: ["completions.write"] },
    });
    expect(created.key).toMatchObject({ workspace_id: teamA, scopes: ["completions.write"] });
    const [entry] = await auditEntries(stores.records, organisationId, "trace-key");
    expect(entry).toMatchObject({ action: "create", resourceType: "api_key", resourceId: created.key.id });
    expect(JSON.stringify(entry)).not.toContain(created.secret);
  });

  it("hides other workspaces' keys (NotFound) and refuses changes to a stronger key before reading them", async () => {
    const strong = await apiKeys.createKey(deps(), admin(), {
      type: "workspace",
      subType: "service",
      body: { name: "strong", scopes: ["*"], workspace_id: teamA },
    });
    const other = await thrown(apiKeys.getKey(deps(), workspaceKey(teamB), { key: strong.key.id }));
    expect(other).toBeInstanceOf(NotFound);
    expect(other).toMatchObject({ code: "api_key_not_found" });

    const changes = unread();
    const weak = workspaceKey(teamA, ["api_keys.update"]);
    const refused = await thrown(apiKeys.updateKey(deps(), weak, { key: strong.key.id, changes }));
    expect(refused).toBeInstanceOf(Forbidden);
    expect(refused).toMatchObject({ code: "scope_escalation" });
    expect(changes).not.toHaveBeenCalled();

    const d = deps();
    expect(await apiKeys.revokeKey(d, admin(), { key: strong.key.id })).toEqual({ id: strong.key.id });
    expect(d.forgetKey).toHaveBeenCalled();
    const rotate = await thrown(apiKeys.rotateKey(deps(), admin(), { key: strong.key.id }));
    expect(rotate).toMatchObject({ param: "id", code: "api_key_revoked" });
  });

  it("answers Invalid for a batch lookup without ids and for a missing key type", async () => {
    expect(await thrown(apiKeys.lookupKeys(deps(), admin(), { ids: [] }))).toMatchObject({ param: "ids" });
    const error = await thrown(apiKeys.createKey(deps(), admin(), { body: { name: "typeless" } }));
    expect(error).toBeInstanceOf(Invalid);
    expect(error).toMatchObject({ param: "type", code: "missing_required_parameter" });
  });
});
