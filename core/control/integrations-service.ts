import type { Principal } from "../auth/principal.ts";
import { requireAdmin, workspaceScope } from "../auth/scopes.ts";
import { newId } from "../ids.ts";
import type { TrustedHosts } from "../security/custom-host.ts";
import type { Page, Secrets } from "../store/ports.ts";
import type { SecretResolver } from "../store/secret-refs.ts";
import { admitCredentialRefs } from "./credential-refs.ts";
import type { ControlDeps } from "./deps.ts";
import { Conflict, Forbidden, NotFound } from "./errors.ts";
import { providerStore } from "./providers.ts";
import {
  type IntegrationResource,
  type ModelEntry,
  findIntegration,
  integrationStore,
  migrateVirtualKeys,
  presentIntegration,
  presentModels,
} from "./integrations.ts";
import { type Lazy, resolveLazy } from "./lazy.ts";
import { type PageRequest, readPage } from "./paging.ts";
import {
  assertWritable,
  boundWorkspace,
  openCredentials,
  parseCredentialInput,
  providerId,
  sealCredentials,
  updateCredentials,
} from "./provider-credentials.ts";
import type { ConfigurationsInput } from "./provider-credentials-schemas.ts";
import { canUseProvider, savedResourceChanged } from "./saved-resources.ts";
import { applyWorkspaceAccess, presentWorkspaceAccess } from "./workspace-access.ts";
import type { WorkspaceAccessBody } from "./workspace-access-schemas.ts";

/**
 * Integrations (saved AI providers, Portkey's /integrations): a registry provider, its key and provider-specific
 * `configurations`, stored encrypted (core/control/provider-credentials.ts) and used as `@slug`.
 * Workspace access: an integration created for a workspace (`workspace_id`, or by a workspace key) serves only
 * that workspace; an organisation-level integration serves organisation keys and, like Portkey's workspace
 * provisioning (least privilege), NO workspace until `PUT /v1/integrations/:id/workspaces` enables some (or
 * `global_workspace_access.enabled`). Models: all allowed by default (`allow_all_models`); custom models and
 * per-model `custom_headers` through `PUT .../models`.
 *
 * Every operation also serves the legacy virtual-key routes, through a `SavedProviderFace`: what the record is
 * called in errors and audit entries, and how it is presented (core/control/virtual-keys-service.ts).
 */

export interface IntegrationDeps extends ControlDeps {
  secrets: Secrets;
  /** TRUSTED_CUSTOM_HOSTS: a `custom_host` is SSRF-checked against them when saved. */
  trustedHosts: TrustedHosts;
  /** Admits secret references in credentials (credential-refs.ts); none: every reference is refused. */
  secretRefs?: SecretResolver;
}

/** How one family of routes names and shows integrations. */
export interface SavedProviderFace<V extends object> {
  /** In audit entries and error codes (`integration_not_found`, `workspace_integration`). */
  resourceType: string;
  /** In messages: `No integration 'x'.` */
  noun: string;
  /** Prefix of the ids of records created through these routes. */
  idPrefix: string;
  /** The input field naming the provider (for its error). */
  providerParam: string;
  /** `object` of the entries of `GET .../workspaces`. */
  workspaceObject: string;
  /**
   * Which records an organisation-wide caller's list for a workspace shows: those the workspace may use
   * (integrations), or those it owns (virtual keys, as before they became integrations).
   */
  workspaceList: "usable" | "owned";
  present(integration: IntegrationResource): V;
}

export const INTEGRATIONS: SavedProviderFace<ReturnType<typeof presentIntegration>> = {
  resourceType: "integration",
  noun: "integration",
  idPrefix: "int",
  providerParam: "ai_provider_id",
  workspaceObject: "integration.workspace",
  workspaceList: "usable",
  present: presentIntegration,
};

export interface IntegrationCreateInput {
  name: string;
  slug: string;
  provider: string;
  key?: string;
  description?: string;
  note?: string;
  workspace_id?: string;
  configurations?: ConfigurationsInput;
  /** The body field `configurations` came from (`configuration` is accepted too), for errors. */
  configurationsParam?: string;
}

export interface IntegrationUpdateInput {
  name?: string;
  slug?: string;
  key?: string;
  description?: string;
  /** `null` clears it. */
  note?: string | null;
  configurations?: ConfigurationsInput;
  configurationsParam?: string;
}

export interface ModelsInput {
  allow_all_models?: boolean;
  models?: Array<{
    slug: string;
    enabled: boolean;
    is_custom?: boolean;
    custom_headers?: Record<string, string>;
    name?: string;
    base_model_slug?: string;
  }>;
}

export interface IntegrationRef {
  /** Id or slug. */
  integration: string;
}

type Face = SavedProviderFace<object>;

/** How a secret field is named in errors: `key`, or under the body's `configurations` (parseCredentialInput's names). */
const secretParam =
  (configurations = "configurations") =>
  (field: string) =>
    field === "key" ? "key" : `${configurations}.${field}`;

/** `@slug` names integrations and workspace providers alike: a slug one of them holds is refused to the other. */
async function refuseProviderSlug(deps: ControlDeps, principal: Principal, slug: string | undefined): Promise<void> {
  if (slug && (await providerStore(deps.records).get(principal.organisationId, slug)))
    throw new Conflict(`The slug '${slug}' is taken by a provider.`, { param: "slug", code: "slug_taken" });
}

/** The integration by id or slug; NotFound when unknown or when the caller may not use it (alike). */
async function loadVisible(
  deps: ControlDeps,
  principal: Principal,
  idOrSlug: string,
  face: Face,
): Promise<IntegrationResource> {
  const integration = await findIntegration(deps.records, principal.organisationId, idOrSlug);
  if (!integration || !canUseProvider(principal, integration))
    throw new NotFound(`No ${face.noun} '${idOrSlug}'.`, { code: `${face.resourceType}_not_found` });
  return integration;
}

/** As loadVisible, for a change: a workspace-bound caller may change only its own workspace's. */
async function loadWritable(deps: ControlDeps, principal: Principal, idOrSlug: string, face: Face) {
  const integration = await loadVisible(deps, principal, idOrSlug, face);
  assertWritable(principal, integration, `${face.noun}s`);
  return integration;
}

async function save(
  deps: ControlDeps,
  principal: Principal,
  current: IntegrationResource,
  changes: Partial<IntegrationResource>,
  face: Face,
  action = "update",
): Promise<IntegrationResource> {
  const updated = await integrationStore(deps.records).update(current, changes);
  await savedResourceChanged(
    deps,
    principal,
    { action, resourceType: face.resourceType, before: current, after: updated },
    face.present,
  );
  return updated;
}

export async function createIntegration<V extends object>(
  deps: IntegrationDeps,
  principal: Principal,
  input: IntegrationCreateInput,
  face: SavedProviderFace<V>,
): Promise<V> {
  const provider = providerId(input.provider, face.providerParam);
  await refuseProviderSlug(deps, principal, input.slug);
  const parsed = await parseCredentialInput(
    { key: input.key, configurations: input.configurations },
    deps.trustedHosts,
    input.configurationsParam,
  );
  await admitCredentialRefs(deps, principal, parsed.secrets, {}, secretParam(input.configurationsParam));
  const credentials = await sealCredentials(deps.secrets, provider, parsed.settings, parsed.secrets);
  const created = await integrationStore(deps.records).create(
    principal.organisationId,
    {
      slug: input.slug,
      name: input.name,
      description: input.description,
      note: input.note,
      workspaceId: workspaceScope(principal, input.workspace_id),
      credentials,
      workspaceAccess: { global: false, workspaceIds: [] },
      models: { allowAll: true, entries: {} },
      createdBy: principal.userId ?? principal.keyId,
    },
    { id: newId(face.idPrefix) },
  );
  const change = { action: "create", resourceType: face.resourceType, after: created };
  return (await savedResourceChanged(deps, principal, change, face.present))!;
}

/**
 * Workspace-bound callers see what their workspace may use. Organisation-wide callers see everything, or for
 * `workspace_id` what the face's `workspaceList` says; `type` keeps only workspace or organisation-level ones.
 */
export async function listIntegrations<V extends object>(
  deps: ControlDeps,
  principal: Principal,
  input: PageRequest & { workspace_id?: string; type?: "workspace" | "organisation" | "all" },
  face: SavedProviderFace<V>,
): Promise<Page<V>> {
  const workspaceId = workspaceScope(principal, input.workspace_id);
  const bound = boundWorkspace(principal);
  await migrateVirtualKeys(deps.records, principal.organisationId);
  const page = await readPage(() =>
    integrationStore(deps.records).list(principal.organisationId, {
      limit: input.limit,
      cursor: input.cursor,
      filter: (integration) => {
        if (input.type === "workspace" && !integration.workspaceId) return false;
        if (input.type === "organisation" && integration.workspaceId) return false;
        if (bound) return canUseProvider(principal, integration);
        if (!workspaceId) return true;
        if (face.workspaceList === "owned") return integration.workspaceId === workspaceId;
        return canUseProvider({ ...principal, keyType: "workspace", workspaceId }, integration);
      },
    }),
  );
  return { items: page.items.map(face.present), cursor: page.cursor };
}

export async function getIntegration<V extends object>(
  deps: ControlDeps,
  principal: Principal,
  input: IntegrationRef,
  face: SavedProviderFace<V>,
): Promise<V> {
  return face.present(await loadVisible(deps, principal, input.integration, face));
}

/** Credentials merge field by field: a change without `key` keeps the stored key. */
export async function updateIntegration<V extends object>(
  deps: IntegrationDeps,
  principal: Principal,
  input: IntegrationRef & { changes: Lazy<IntegrationUpdateInput> },
  face: SavedProviderFace<V>,
): Promise<V> {
  const current = await loadWritable(deps, principal, input.integration, face);
  const body = await resolveLazy(input.changes);
  const changes: Partial<IntegrationResource> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.slug !== undefined && body.slug !== current.slug) {
    await refuseProviderSlug(deps, principal, body.slug);
    changes.slug = body.slug;
  }
  if (body.description !== undefined) changes.description = body.description;
  if (body.note !== undefined) changes.note = body.note ?? undefined;
  if (body.key !== undefined || body.configurations !== undefined) {
    const parsed = await parseCredentialInput(
      { key: body.key, configurations: body.configurations },
      deps.trustedHosts,
      body.configurationsParam,
    );
    const stored = await openCredentials(deps.secrets, current.credentials);
    await admitCredentialRefs(deps, principal, parsed.secrets, stored, secretParam(body.configurationsParam));
    changes.credentials = await updateCredentials(deps.secrets, current.credentials, parsed);
  }
  return face.present(await save(deps, principal, current, changes, face));
}

export async function deleteIntegration(
  deps: ControlDeps,
  principal: Principal,
  input: IntegrationRef,
  face: Face,
): Promise<{ id: string; slug: string }> {
  const integration = await loadWritable(deps, principal, input.integration, face);
  await integrationStore(deps.records).delete(integration);
  const change = { action: "delete", resourceType: face.resourceType, before: integration };
  await savedResourceChanged(deps, principal, change, face.present);
  return { id: integration.id, slug: integration.slug };
}

// --- workspace access ----------------------------------------------------------------------------------------

export async function listIntegrationWorkspaces(
  deps: ControlDeps,
  principal: Principal,
  input: IntegrationRef,
  face: Face,
) {
  const integration = await loadVisible(deps, principal, input.integration, face);
  return presentWorkspaceAccess(face.workspaceObject, integration.workspaceId, integration.workspaceAccess);
}

/** Organisation-wide callers share an organisation-level integration with workspaces (never a workspace's own). */
export async function updateIntegrationWorkspaces(
  deps: ControlDeps,
  principal: Principal,
  input: IntegrationRef & { access: Lazy<WorkspaceAccessBody> },
  face: Face,
) {
  requireAdmin(principal);
  const current = await loadVisible(deps, principal, input.integration, face);
  if (current.workspaceId) {
    const noun = face.noun[0]!.toUpperCase() + face.noun.slice(1);
    throw new Forbidden(
      `${noun} '${current.slug}' belongs to workspace '${current.workspaceId}' and cannot be shared.`,
      { code: `workspace_${face.resourceType}` },
    );
  }
  const access = applyWorkspaceAccess(current.workspaceAccess, await resolveLazy(input.access));
  const updated = await save(deps, principal, current, { workspaceAccess: access }, face, "update_workspaces");
  return presentWorkspaceAccess(face.workspaceObject, undefined, updated.workspaceAccess);
}

// --- models --------------------------------------------------------------------------------------------------

export async function listIntegrationModels(deps: ControlDeps, principal: Principal, input: IntegrationRef) {
  return presentModels(await loadVisible(deps, principal, input.integration, INTEGRATIONS));
}

/** Adds or changes models; a field not given keeps its current value. */
export async function updateIntegrationModels(
  deps: ControlDeps,
  principal: Principal,
  input: IntegrationRef & { models: Lazy<ModelsInput> },
) {
  const current = await loadWritable(deps, principal, input.integration, INTEGRATIONS);
  const body = await resolveLazy(input.models);
  const entries = { ...current.models.entries };
  for (const model of body.models ?? []) {
    const previous: Partial<ModelEntry> = entries[model.slug] ?? {};
    const entry: ModelEntry = { enabled: model.enabled, isCustom: model.is_custom ?? previous.isCustom ?? false };
    const customHeaders = givenOr(model.custom_headers, previous.customHeaders);
    const name = givenOr(model.name, previous.name);
    const baseModelSlug = givenOr(model.base_model_slug, previous.baseModelSlug);
    if (customHeaders !== undefined) entry.customHeaders = customHeaders;
    if (name !== undefined) entry.name = name;
    if (baseModelSlug !== undefined) entry.baseModelSlug = baseModelSlug;
    entries[model.slug] = entry;
  }
  const models = { allowAll: body.allow_all_models ?? current.models.allowAll, entries };
  return presentModels(await save(deps, principal, current, { models }, INTEGRATIONS, "update_models"));
}

/** The value given, else the previous one when it has one. */
const givenOr = <T>(given: T | undefined, previous: T | undefined): T | undefined =>
  given !== undefined ? given : previous || undefined;

export async function deleteIntegrationModels(
  deps: ControlDeps,
  principal: Principal,
  input: IntegrationRef & { slugs: string[] },
) {
  const current = await loadWritable(deps, principal, input.integration, INTEGRATIONS);
  const entries = { ...current.models.entries };
  for (const slug of input.slugs) delete entries[slug];
  const models = { ...current.models, entries };
  return presentModels(await save(deps, principal, current, { models }, INTEGRATIONS, "update_models"));
}
