import type { Principal } from "../auth/principal.ts";
import type { ModelRules, ProviderTarget } from "../providers/types.ts";
import { type TrustedHosts, checkedCustomHostBase } from "../security/custom-host.ts";
import type { Records, Secrets } from "../store/ports.ts";
import type { SecretResolver } from "../store/secret-refs.ts";
import { TtlCache } from "../util/ttl-cache.ts";
import { openConfigSecrets } from "./config-secrets.ts";
import { resolveCredentialRefs } from "./credential-refs.ts";
import { type ControlDeps, audit } from "./deps.ts";
import { NotFound, Unauthenticated } from "./errors.ts";
import { type IntegrationResource, findIntegration } from "./integrations.ts";
import { type ProviderResource, providerExpired, providerStore } from "./providers.ts";
import { boundWorkspace, openCredentials, targetOf } from "./provider-credentials.ts";
import { type Resource, ResourceStore } from "./resource-store.ts";
import { workspaceMayUse } from "./workspace-access.ts";

/**
 * Saved configs and saved providers (integrations, which legacy virtual keys are too: core/control/integrations.ts):
 * config records, and the three routing seams of Services (resolveSavedConfig, resolveDefaultConfig, resolveSavedProvider), with short
 * in-memory caches so the data plane pays no store read on warm requests:
 * - saved configs: per organisation + id/slug for CACHE_MS; the config object returned stays the SAME object
 *   while the config's version is unchanged (core/routing caches compiled configs by identity);
 * - saved providers: per organisation + slug for CACHE_MS, credentials decrypted once per load;
 * - workspace defaults: per workspace for CACHE_MS.
 * Mutations in this process drop the organisation's cache entries at once; other processes (other Lambda
 * containers) see changes within CACHE_MS.
 */
export const CACHE_MS = 5_000;

export interface ConfigResource extends Resource {
  name: string;
  config: Record<string, unknown>;
  isDefault: boolean;
  status: "active";
  createdBy?: string;
}

/** Engineer B's workspace record (kind WORKSPACE): only the fields read here. */
export interface WorkspaceResource extends Resource {
  defaults?: { config_id?: string | null; user_api_key_config?: string | null; [key: string]: unknown };
}

/**
 * Config slugs are unique per workspace (ResourceStore's `slugScope: "workspace"`): a config is looked up by the
 * caller's view, its workspace's configs and the organisation-level ones, so that is where a slug must be unique,
 * and a 409 never tells a workspace that another workspace has a config of that slug.
 */
export const configStore = (records: Records) =>
  new ResourceStore<ConfigResource>(records, "CONFIG", "pc", [], "workspace");
export const workspaceStore = (records: Records) => new ResourceStore<WorkspaceResource>(records, "WORKSPACE", "ws");

// --- config versions ---------------------------------------------------------------------------------------

/** Every version of a config (the current one included): pk `CONFIG#<id>`, sk `VERSION#<n, zero-padded>`. */
export const versionKey = (configId: string, version: number) => ({
  pk: `CONFIG#${configId}`,
  sk: `VERSION#${String(version).padStart(8, "0")}`,
});

export async function writeConfigVersion(
  records: Records,
  config: ConfigResource,
  principal?: Principal,
): Promise<void> {
  await records.put({
    ...versionKey(config.id, config.version),
    configId: config.id,
    organisationId: config.organisationId,
    version: config.version,
    name: config.name,
    slug: config.slug,
    config: config.config,
    createdAt: config.updatedAt,
    createdBy: principal?.userId ?? principal?.keyId,
  });
}

// --- caches --------------------------------------------------------------------------------------------------

interface SavedProvider {
  resource: IntegrationResource;
  target: ProviderTarget;
  /** The workspace provider the slug named, when it was one rather than an integration's. */
  handle?: ProviderResource;
}

/**
 * A workspace provider serves only its workspace (organisation-wide callers too), while it has not expired and
 * its workspace may still use the integration; an integration, whoever may use it.
 */
function mayUseSaved(principal: Principal, saved: SavedProvider): boolean {
  const { handle, resource } = saved;
  if (!handle) return canUseProvider(principal, resource);
  const bound = boundWorkspace(principal);
  if (bound && bound !== handle.workspaceId) return false;
  if (providerExpired(handle)) return false;
  return canUseProvider({ ...principal, keyType: "workspace", workspaceId: handle.workspaceId }, resource);
}

interface Caches {
  configs: TtlCache<string, ConfigResource>;
  /** Config object identity per config id and version. */
  objects: TtlCache<string, { version: number; config: Record<string, unknown> }>;
  providers: TtlCache<string, SavedProvider>;
  /** The workspace's default config id or slug; null when it has none. */
  defaults: TtlCache<string, string | null>;
}

const cachesByRecords = new WeakMap<Records, Caches>();
const MAX_ENTRIES = 5_000;
const MAX_BYTES = 32 * 1024 * 1024;

/** Approximate heap held by a cached record: its JSON's characters, twice over (strings are UTF-16). */
const recordBytes = (key: string, value: unknown): number =>
  256 + (key.length + (value === null ? 0 : JSON.stringify(value).length)) * 2;

function cachesOf(records: Records): Caches {
  let caches = cachesByRecords.get(records);
  if (!caches) {
    const options = { ttlMs: CACHE_MS, maxEntries: MAX_ENTRIES, maxBytes: MAX_BYTES, sizeOf: recordBytes };
    caches = {
      configs: new TtlCache<string, ConfigResource>(options),
      objects: new TtlCache<string, { version: number; config: Record<string, unknown> }>({
        ...options,
        ttlMs: Number.POSITIVE_INFINITY,
      }),
      // The target holds opened credentials: measured by the resource (sealed) and the target alike.
      providers: new TtlCache<string, SavedProvider>({
        ...options,
        sizeOf: (key, saved) => recordBytes(key, saved.resource) * 2,
      }),
      defaults: new TtlCache<string, string | null>(options),
    };
    cachesByRecords.set(records, caches);
  }
  return caches;
}

/** Drops this process's cached configs, providers and defaults of an organisation (after a mutation). */
export function invalidateSaved(records: Records, organisationId: string): void {
  const caches = cachesOf(records);
  const prefix = `${organisationId}:`;
  const ofOrganisation = (key: string) => key.startsWith(prefix);
  caches.configs.deleteWhere(ofOrganisation);
  caches.providers.deleteWhere(ofOrganisation);
  caches.defaults.deleteWhere(ofOrganisation);
}

// --- the routing seams -----------------------------------------------------------------------------------------

/**
 * What the routing seams read of a request (a RequestContext has it): the caller and the stores. Structural,
 * so that this module needs nothing of the HTTP layer.
 */
export interface SavedResourceCaller {
  principal?: Principal;
  services: { stores: { records: Records; secrets: Secrets; secretRefs?: SecretResolver }; trustedHosts: TrustedHosts };
}

function principalOf(caller: SavedResourceCaller): Principal {
  if (!caller.principal) throw new Unauthenticated("Authentication required.");
  return caller.principal;
}

/**
 * After a saved config, integration or virtual key changed: drops this process's cached copies of the
 * organisation's saved resources, audits the change with public views only (never credentials), and returns
 * the new view for the response.
 */
export async function savedResourceChanged<T extends Resource, V extends object>(
  deps: ControlDeps,
  principal: Principal,
  change: { action: string; resourceType: string; before?: T; after?: T },
  present: (resource: T) => V,
): Promise<V | undefined> {
  const subject = (change.after ?? change.before)!;
  invalidateSaved(deps.records, subject.organisationId);
  const after = change.after && present(change.after);
  await audit(deps, principal, {
    action: change.action,
    resourceType: change.resourceType,
    resourceId: subject.id,
    workspaceId: subject.workspaceId,
    before: change.before && present(change.before),
    after,
  });
  return after;
}

/** `x-gateway-config: <id or slug>`: the saved config's JSON, same object while unchanged. */
export async function resolveSavedConfig(idOrSlug: string, ctx: SavedResourceCaller): Promise<unknown> {
  const principal = principalOf(ctx);
  const records = ctx.services.stores.records;
  const caches = cachesOf(records);
  const bound = boundWorkspace(principal);
  // A slug names a config in the caller's workspace first: the cache key holds the workspace.
  const key = `${principal.organisationId}:${bound ?? ""}:${idOrSlug}`;
  let resource = caches.configs.get(key);
  if (!resource) {
    resource = await configStore(records).get(principal.organisationId, idOrSlug, { workspaceId: bound });
    if (!resource) throw unknownConfig(idOrSlug);
    caches.configs.set(key, resource);
  }
  if (bound && resource.workspaceId && resource.workspaceId !== bound) {
    // As if it did not exist: another workspace's ids and slugs must not be told apart from unknown ones.
    throw unknownConfig(idOrSlug);
  }
  const known = caches.objects.get(resource.id);
  if (known && known.version === resource.version) return known.config;
  // Credentials are stored sealed (config-secrets.ts): opened once per version, kept only in this cache.
  const config = await openConfigSecrets(ctx.services.stores.secrets, resource.config);
  caches.objects.set(resource.id, { version: resource.version, config });
  return config;
}

const unknownConfig = (idOrSlug: string) =>
  new NotFound(`Unknown config '${idOrSlug}'. Send the config JSON inline, or save it first.`, {
    code: "config_not_found",
  });

/**
 * The caller's workspace default config (engineer B's workspace record, kind WORKSPACE): user API keys use
 * `defaults.user_api_key_config` when set, every caller `defaults.config_id`. A default naming a config that
 * no longer exists is ignored.
 */
export async function resolveDefaultConfig(ctx: SavedResourceCaller): Promise<unknown | undefined> {
  const principal = ctx.principal;
  if (!principal?.workspaceId) return undefined;
  const records = ctx.services.stores.records;
  const caches = cachesOf(records);
  const userKey = principal.keySubType === "user";
  const key = `${principal.organisationId}:${principal.workspaceId}:${userKey ? "user" : "service"}`;
  let configRef = caches.defaults.get(key);
  if (configRef === undefined) {
    const workspace = await workspaceStore(records).get(principal.organisationId, principal.workspaceId);
    const defaults = workspace?.defaults;
    configRef = (userKey ? defaults?.user_api_key_config : undefined) ?? defaults?.config_id ?? null;
    caches.defaults.set(key, configRef);
  }
  if (!configRef) return undefined;
  try {
    return await resolveSavedConfig(configRef, ctx);
  } catch (error) {
    if (error instanceof NotFound) return undefined;
    throw error;
  }
}

/**
 * May this caller use this saved provider? Organisation keys: always. Workspace-bound callers: their
 * workspace's own, and organisation-level integrations and virtual keys enabled for their workspace.
 */
export function canUseProvider(principal: Principal, integration: IntegrationResource): boolean {
  const bound = boundWorkspace(principal);
  if (!bound) return true;
  return workspaceMayUse(bound, integration.workspaceId, integration.workspaceAccess);
}

/**
 * `@slug` (x-gateway-provider, a config's provider), `x-gateway-virtual-key` and a config's `virtual_key`:
 * the integration with that slug (a virtual key is one). NotFound when none exists or the caller's workspace
 * may not use it (never Forbidden: that would confirm another workspace's slug).
 */
export async function resolveSavedProvider(slug: string, ctx: SavedResourceCaller): Promise<ProviderTarget> {
  const principal = principalOf(ctx);
  const { records, secrets, secretRefs } = ctx.services.stores;
  const caches = cachesOf(records);
  const key = `${principal.organisationId}:${slug}`;
  let saved = caches.providers.get(key);
  if (!saved) {
    // An integration's slug, else a workspace provider's (core/control/providers.ts), which names an integration.
    let handle: ProviderResource | undefined;
    let resource = await findIntegration(records, principal.organisationId, slug);
    if (!resource) {
      handle = await providerStore(records).get(principal.organisationId, slug);
      if (handle) resource = await findIntegration(records, principal.organisationId, handle.integrationId);
    }
    if (!resource) throw unknownProvider(slug);
    const opened = await openCredentials(secrets, resource.credentials);
    const owner = { records, organisationId: resource.organisationId, slug };
    const target = targetOf(resource.credentials, await resolveCredentialRefs(opened, secretRefs, owner));
    const rules = modelRulesOf(resource);
    if (rules) target.modelRules = rules;
    target.integrationId = resource.id;
    saved = { resource, target, handle };
    caches.providers.set(key, saved);
  }
  if (!mayUseSaved(principal, saved)) throw unknownProvider(slug);
  const { customHost } = saved.target;
  if (customHost) {
    // Checked when the request is made, not only when saved: TRUSTED_CUSTOM_HOSTS may have changed since, and
    // a name may resolve elsewhere now (the verdict is cached briefly; connections are checked again anyway).
    await checkedCustomHostBase(customHost, ctx.services.trustedHosts, "configurations.custom_host");
  }
  return saved.target;
}

const unknownProvider = (slug: string) =>
  new NotFound(`Unknown saved provider '@${slug}'. Create an integration (or virtual key) with that slug first.`, {
    code: "provider_not_found",
  });

function modelRulesOf(integration: IntegrationResource): ModelRules | undefined {
  const { allowAll, entries } = integration.models;
  const models: ModelRules["models"] = {};
  let any = false;
  for (const [slug, entry] of Object.entries(entries)) {
    models[slug] = { enabled: entry.enabled, headers: entry.customHeaders };
    any = true;
  }
  if (allowAll && !any) return undefined;
  return { allowAll, models };
}
