import type { Records } from "../../store/ports.ts";
import { ConditionFailedError } from "../../store/ports.ts";
import { isConflict } from "../errors.ts";
import { type StoredCredentials, isoTime, presentCredentials } from "../credentials/credentials.ts";
import { type Resource, ResourceStore } from "../resource-store.ts";
import { NO_WORKSPACE_ACCESS, type WorkspaceAccess } from "../workspaces/access.ts";

/**
 * Integration records (saved providers): the one stored kind behind both `/v1/integrations` and the legacy
 * `/v1/virtual-keys` routes (core/control/virtual-keys/service.ts presents them in the legacy shape). Ids are
 * `int_...`, or `vk_...` for those created (or migrated) as virtual keys.
 *
 * Virtual keys saved before they became integrations (kind VIRTUALKEY) are migrated on read: the first lookup
 * of one by id or slug, and the first list of the organisation's saved providers, rewrite it as an integration
 * (same id, slug, credentials, workspace access and creation time) and delete the old record.
 */

export interface ModelEntry {
  enabled: boolean;
  isCustom: boolean;
  customHeaders?: Record<string, string>;
  name?: string;
  baseModelSlug?: string;
}

export interface IntegrationResource extends Resource {
  slug: string;
  name: string;
  description?: string;
  note?: string;
  credentials: StoredCredentials;
  /** Which workspaces may use an organisation-level integration (workspace-owned ones: only their own). */
  workspaceAccess: WorkspaceAccess;
  models: { allowAll: boolean; entries: Record<string, ModelEntry> };
  createdBy?: string;
}

export const integrationStore = (records: Records) =>
  new ResourceStore<IntegrationResource>(records, "INTEGRATION", "int", ["vk"]);

/** The integration with this id or slug, migrating a legacy virtual key that has it. */
export async function findIntegration(
  records: Records,
  organisationId: string,
  idOrSlug: string,
): Promise<IntegrationResource | undefined> {
  const integration = await integrationStore(records).get(organisationId, idOrSlug);
  if (integration) return integration;
  const legacy = await legacyVirtualKeyStore(records).get(organisationId, idOrSlug);
  return legacy && migrateVirtualKey(records, legacy);
}

/** Migrates every legacy virtual key of the organisation (before a list, so that it shows them). */
export async function migrateVirtualKeys(records: Records, organisationId: string): Promise<void> {
  const legacy = legacyVirtualKeyStore(records);
  let page = await legacy.list(organisationId, { limit: 100 });
  while (page.items.length > 0) {
    for (const virtualKey of page.items) await migrateVirtualKey(records, virtualKey);
    page = await legacy.list(organisationId, { limit: 100 });
  }
}

// --- legacy virtual keys -------------------------------------------------------------------------------------

/** A virtual key as it was stored before virtual keys became integrations. */
interface LegacyVirtualKey extends Resource {
  slug: string;
  name: string;
  note?: string;
  credentials: StoredCredentials;
  /** Absent on the oldest ones: then no workspace may use them (as before). */
  workspaceAccess?: WorkspaceAccess;
  createdBy?: string;
}

const legacyVirtualKeyStore = (records: Records) => new ResourceStore<LegacyVirtualKey>(records, "VIRTUALKEY", "vk");

async function migrateVirtualKey(records: Records, legacy: LegacyVirtualKey): Promise<IntegrationResource> {
  const store = integrationStore(records);
  const fields = {
    slug: legacy.slug,
    name: legacy.name,
    ...(legacy.note !== undefined ? { note: legacy.note } : {}),
    workspaceId: legacy.workspaceId,
    credentials: legacy.credentials,
    workspaceAccess: legacy.workspaceAccess ?? { ...NO_WORKSPACE_ACCESS, workspaceIds: [] },
    models: { allowAll: true, entries: {} },
    ...(legacy.createdBy !== undefined ? { createdBy: legacy.createdBy } : {}),
  };
  const options = { id: legacy.id, createdAt: legacy.createdAt };
  let integration: IntegrationResource;
  try {
    integration = await store.create(legacy.organisationId, fields, options);
  } catch (error) {
    if (!isConflict(error) && !(error instanceof ConditionFailedError)) throw error;
    // Another process migrated it first; or an integration already has this slug (it took precedence for
    // `@slug` and x-gateway-virtual-key before too): the virtual key keeps its id, with the slug made unique.
    integration =
      (await store.get(legacy.organisationId, legacy.id)) ??
      (await store.create(
        legacy.organisationId,
        { ...fields, slug: `${legacy.slug}-${legacy.id.slice(-6)}` },
        options,
      ));
  }
  await legacyVirtualKeyStore(records).delete(legacy);
  return integration;
}

// --- presentation --------------------------------------------------------------------------------------------

export function presentIntegration(integration: IntegrationResource) {
  return {
    id: integration.id,
    object: "integration",
    slug: integration.slug,
    name: integration.name,
    ai_provider_id: integration.credentials.provider,
    description: integration.description ?? null,
    note: integration.note ?? null,
    organisation_id: integration.organisationId,
    workspace_id: integration.workspaceId ?? null,
    status: "active",
    ...presentCredentials(integration.credentials),
    global_workspace_access: integration.workspaceId ? null : { enabled: integration.workspaceAccess.global },
    allow_all_models: integration.models.allowAll,
    version: integration.version,
    created_at: isoTime(integration.createdAt),
    last_updated_at: isoTime(integration.updatedAt),
  };
}

/** An integration's models (`GET/PUT .../models`). */
export function presentModels(integration: IntegrationResource) {
  const data = Object.entries(integration.models.entries).map(([slug, entry]) => ({
    slug,
    object: "integration.model",
    enabled: entry.enabled,
    is_custom: entry.isCustom,
    name: entry.name ?? null,
    base_model_slug: entry.baseModelSlug ?? null,
    custom_headers: entry.customHeaders ?? {},
  }));
  return { object: "list", allow_all_models: integration.models.allowAll, total: data.length, data };
}
