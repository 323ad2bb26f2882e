import type { Principal } from "../../auth/principal.ts";
import { isOrganisationWide, workspaceScope } from "../../auth/scopes.ts";
import type { Page } from "../../store/ports.ts";
import { requiredWorkspace } from "../access.ts";
import type { ControlDeps } from "../deps.ts";
import { Conflict, Invalid, NotFound } from "../errors.ts";
import { findIntegration } from "../integrations/store.ts";
import { type PageRequest, readPage } from "../paging.ts";
import { type ProviderResource, presentProvider, providerStore } from "./store.ts";
import { canUseProvider, savedResourceChanged } from "../saved-resources.ts";

/**
 * Providers (`/v1/providers`): a workspace's named handles on integrations it may use. Creating one needs an
 * integration the workspace can use (its own, or an organisation-level one enabled for it); the slug shares the
 * `@slug` namespace with integrations, so one taken by an integration is refused. Another workspace's provider is
 * NotFound, never Forbidden (that would confirm it exists).
 */

const RESOURCE_TYPE = "provider";

export interface ProviderCreateInput {
  name: string;
  integration_id: string;
  workspace_id?: string;
  slug?: string;
  note?: string | null;
  expires_at?: string | null;
}

export interface ProviderUpdateInput {
  workspace_id?: string;
  name?: string;
  note?: string | null;
  expires_at?: string | null;
}

const toSeconds = (iso: string | null | undefined) =>
  iso === undefined ? undefined : iso === null ? null : Math.floor(Date.parse(iso) / 1000);

export async function createProvider(deps: ControlDeps, principal: Principal, input: ProviderCreateInput) {
  const workspaceId = requiredWorkspace(principal, input.workspace_id);
  const integration = await findIntegration(deps.records, principal.organisationId, input.integration_id);
  // Only an integration this workspace may use: whatever else exists stays unknown to it.
  if (!integration || !canUseProvider({ ...principal, keyType: "workspace", workspaceId }, integration)) {
    throw new Invalid(`No integration '${input.integration_id}' this workspace may use.`, {
      param: "integration_id",
      code: "integration_not_found",
    });
  }
  const slug = input.slug ?? `${integration.slug}-${workspaceId.slice(-6)}`.toLowerCase();
  if (await findIntegration(deps.records, principal.organisationId, slug)) {
    throw new Conflict(`The slug '${slug}' is taken by an integration.`, { param: "slug", code: "slug_taken" });
  }
  const expiresAt = toSeconds(input.expires_at);
  const created = await providerStore(deps.records).create(principal.organisationId, {
    workspaceId,
    slug,
    name: input.name,
    note: input.note ?? undefined,
    integrationId: integration.id,
    ...(expiresAt ? { expiresAt } : {}),
  });
  await savedResourceChanged(
    deps,
    principal,
    { action: "create", resourceType: RESOURCE_TYPE, after: created },
    presentProvider,
  );
  return { id: created.id, slug: created.slug };
}

/** By id or slug, in the caller's workspace (or the one an organisation-wide caller names). */
async function loadVisible(deps: ControlDeps, principal: Principal, idOrSlug: string, workspace?: string) {
  const provider = await providerStore(deps.records).get(principal.organisationId, idOrSlug);
  const visible =
    provider &&
    (isOrganisationWide(principal)
      ? !workspace || provider.workspaceId === workspace
      : provider.workspaceId === principal.workspaceId);
  if (!provider || !visible) throw new NotFound(`No provider '${idOrSlug}'.`, { code: "provider_not_found" });
  return provider;
}

export async function listProviders(
  deps: ControlDeps,
  principal: Principal,
  input: PageRequest & { workspace_id?: string },
): Promise<Page<ReturnType<typeof presentProvider>>> {
  const workspaceId = workspaceScope(principal, input.workspace_id);
  const page = await readPage(() =>
    providerStore(deps.records).list(principal.organisationId, {
      limit: input.limit,
      cursor: input.cursor,
      filter: (provider) => !workspaceId || provider.workspaceId === workspaceId,
    }),
  );
  return { items: page.items.map(presentProvider), cursor: page.cursor };
}

export async function getProvider(deps: ControlDeps, principal: Principal, idOrSlug: string, workspace?: string) {
  return presentProvider(await loadVisible(deps, principal, idOrSlug, workspace));
}

export async function updateProvider(
  deps: ControlDeps,
  principal: Principal,
  idOrSlug: string,
  input: ProviderUpdateInput,
) {
  const current = await loadVisible(deps, principal, idOrSlug, input.workspace_id);
  const changes: Partial<ProviderResource> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.note !== undefined) changes.note = input.note ?? undefined;
  const expiresAt = toSeconds(input.expires_at);
  if (expiresAt !== undefined) changes.expiresAt = expiresAt ?? undefined;
  const updated = await providerStore(deps.records).update(current, changes);
  const change = { action: "update", resourceType: RESOURCE_TYPE, before: current, after: updated };
  await savedResourceChanged(deps, principal, change, presentProvider);
  return { id: updated.id, slug: updated.slug };
}

export async function deleteProvider(deps: ControlDeps, principal: Principal, idOrSlug: string, workspace?: string) {
  const provider = await loadVisible(deps, principal, idOrSlug, workspace);
  await providerStore(deps.records).delete(provider);
  await savedResourceChanged(
    deps,
    principal,
    { action: "delete", resourceType: RESOURCE_TYPE, before: provider },
    presentProvider,
  );
  return { id: provider.id, slug: provider.slug, object: "provider", deleted: true };
}
