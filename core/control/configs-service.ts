import type { Principal } from "../auth/principal.ts";
import { workspaceScope } from "../auth/scopes.ts";
import { validateConfigGuardrails } from "../guardrails/config-guardrails.ts";
import { compileConfig } from "../routing/config.ts";
import { loadRegexEngine } from "../routing/query.ts";
import type { Page } from "../store/ports.ts";
import { maxJsonDepth, withinJsonDepth } from "../util/json-depth.ts";
import { maskConfigSecrets, openConfigSecrets, restoreConfigSecrets, sealConfigSecrets } from "./config-secrets.ts";
import type { ConfigCreateInput, ConfigUpdateInput } from "./configs-schemas.ts";
import type { ControlDeps } from "./deps.ts";
import { Conflict, Invalid, NotFound } from "./errors.ts";
import type { IntegrationDeps } from "./integrations-service.ts";
import { type Lazy, resolveLazy } from "./lazy.ts";
import { type PageRequest, readPage } from "./paging.ts";
import { assertWritable, boundWorkspace, isoTime } from "./provider-credentials.ts";
import {
  type ConfigResource,
  configStore,
  savedResourceChanged,
  versionKey,
  workspaceStore,
  writeConfigVersion,
} from "./saved-resources.ts";

/**
 * Saved routing configs (`/v1/configs`, Portkey's /configs): CRUD and versions (every create and update stores
 * the config as version n), usable as `x-gateway-config: <id or slug>` (core/control/saved-resources.ts). The
 * `config` is validated by the routing layer's own compiler: an error names the path inside it
 * (`config.targets[0].weight`), its guardrails' check parameters included. Credentials and guardrail secrets in it
 * are stored sealed and shown masked (config-secrets.ts).
 */

/** Sealing credentials and checking custom hosts: what integrations need too. */
export type ConfigDeps = IntegrationDeps;

export type ConfigView = ReturnType<typeof presentConfig>;

export function presentConfig(config: ConfigResource) {
  return {
    id: config.id,
    object: "config",
    slug: config.slug ?? null,
    name: config.name,
    organisation_id: config.organisationId,
    workspace_id: config.workspaceId ?? null,
    config: maskConfigSecrets(config.config),
    is_default: config.isDefault ? 1 : 0,
    status: config.status,
    version: config.version,
    version_id: String(config.version),
    owner_id: config.createdBy ?? null,
    created_at: isoTime(config.createdAt),
    last_updated_at: isoTime(config.updatedAt),
  };
}

/** `config` as sent: an object, or a JSON string of one (Invalid when it is not JSON or nested too deep). */
function parsedConfig(value: unknown): Record<string, unknown> {
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new Invalid(`Invalid value for 'config': not valid JSON (${(error as Error).message}).`, {
        param: "config",
        code: "invalid_config",
      });
    }
  }
  if (!withinJsonDepth(parsed)) {
    throw new Invalid(
      `config nests objects and arrays deeper than the limit of ${maxJsonDepth()} levels (GATEWAY_MAX_JSON_DEPTH).`,
      { param: "config", code: "json_too_deep" },
    );
  }
  return parsed as Record<string, unknown>;
}

/** Compiled as the routing layer will (RE2 loaded first when a condition uses `$regex`), guardrail checks validated. */
async function checkedConfig(deps: ConfigDeps, raw: unknown): Promise<Record<string, unknown>> {
  await loadRegexEngine();
  const compiled = compileConfig(raw, deps.trustedHosts, "config");
  await validateConfigGuardrails(compiled, "config");
  return raw as Record<string, unknown>;
}

/** A config the caller may see: its workspace's and organisation-level ones (NotFound otherwise, alike). */
async function loadVisible(deps: ControlDeps, principal: Principal, idOrSlug: string): Promise<ConfigResource> {
  const bound = boundWorkspace(principal);
  const config = await configStore(deps.records).get(principal.organisationId, idOrSlug, { workspaceId: bound });
  if (!config || (bound && config.workspaceId && config.workspaceId !== bound))
    throw new NotFound(`No config '${idOrSlug}'.`, { code: "config_not_found" });
  return config;
}

export interface ConfigRef {
  /** Id or slug. */
  config: string;
}

export async function createConfig(
  deps: ConfigDeps,
  principal: Principal,
  input: ConfigCreateInput,
): Promise<ConfigView> {
  const sent = await restoreConfigSecrets(parsedConfig(input.config));
  const config = await sealConfigSecrets(deps.secrets, await checkedConfig(deps, sent));
  const created = await configStore(deps.records).create(principal.organisationId, {
    name: input.name,
    slug: input.slug,
    workspaceId: workspaceScope(principal, input.workspace_id),
    config,
    isDefault: input.is_default ?? input.isDefault ?? false,
    status: "active",
    createdBy: principal.userId ?? principal.keyId,
  });
  await writeConfigVersion(deps.records, created, principal);
  const change = { action: "create", resourceType: "config", after: created };
  return (await savedResourceChanged(deps, principal, change, presentConfig))!;
}

/** Workspace-bound callers: their workspace's and organisation-level configs; others all, or one workspace's. */
export async function listConfigs(
  deps: ControlDeps,
  principal: Principal,
  input: PageRequest & { workspace_id?: string },
): Promise<Page<ConfigView>> {
  const workspaceId = workspaceScope(principal, input.workspace_id);
  const bound = boundWorkspace(principal);
  const page = await readPage(() =>
    configStore(deps.records).list(principal.organisationId, {
      limit: input.limit,
      cursor: input.cursor,
      filter: (config) => {
        if (bound) return !config.workspaceId || config.workspaceId === bound;
        return !workspaceId || config.workspaceId === workspaceId;
      },
    }),
  );
  return { items: page.items.map(presentConfig), cursor: page.cursor };
}

/** The config, or one of its versions (`version`, read after the config was found). */
export async function getConfig(
  deps: ControlDeps,
  principal: Principal,
  input: ConfigRef & { version?: Lazy<number | undefined> },
) {
  const config = await loadVisible(deps, principal, input.config);
  const version = await resolveLazy(input.version);
  if (version === undefined) return presentConfig(config);
  const key = versionKey(config.id, version);
  const item = await deps.records.get(key.pk, key.sk);
  if (!item) throw new NotFound(`Config '${input.config}' has no version ${version}.`, { code: "version_not_found" });
  return {
    ...presentConfig(config),
    name: item.name,
    config: maskConfigSecrets(item.config),
    version,
    version_id: String(version),
    current_version: config.version,
  };
}

export async function listConfigVersions(
  deps: ControlDeps,
  principal: Principal,
  input: ConfigRef & { page: Lazy<PageRequest> },
) {
  const config = await loadVisible(deps, principal, input.config);
  const { limit, cursor } = await resolveLazy(input.page);
  const page = await readPage(() =>
    deps.records.query({ partition: `CONFIG#${config.id}`, prefix: "VERSION#", order: "desc", limit, cursor }),
  );
  const items = page.items.map((item) => ({
    object: "config.version",
    config_id: config.id,
    version: item.version,
    version_id: String(item.version),
    name: item.name,
    slug: item.slug ?? null,
    config: maskConfigSecrets(item.config),
    created_at: isoTime(item.createdAt as number),
    created_by: item.createdBy ?? null,
  }));
  return { items, cursor: page.cursor };
}

export async function updateConfig(
  deps: ConfigDeps,
  principal: Principal,
  input: ConfigRef & { changes: Lazy<ConfigUpdateInput> },
): Promise<ConfigView> {
  const current = await loadVisible(deps, principal, input.config);
  assertWritable(principal, current, "configs");
  const body = await resolveLazy(input.changes);
  const changes: Partial<ConfigResource> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.slug !== undefined) changes.slug = body.slug;
  if (body.config !== undefined) {
    // A secret sent back as GET showed it (masked) keeps its stored value: checked with that value.
    const previous = await openConfigSecrets(deps.secrets, current.config);
    const sent = await restoreConfigSecrets(parsedConfig(body.config), previous);
    changes.config = await sealConfigSecrets(deps.secrets, await checkedConfig(deps, sent));
  }
  const flag = body.is_default ?? body.isDefault;
  if (flag !== undefined) changes.isDefault = flag;
  const updated = await configStore(deps.records).update(current, changes);
  await writeConfigVersion(deps.records, updated, principal);
  const change = { action: "update", resourceType: "config", before: current, after: updated };
  return (await savedResourceChanged(deps, principal, change, presentConfig))!;
}

/** Refused (Conflict) while a workspace uses the config as its user API key default. Versions go with it. */
export async function deleteConfig(deps: ControlDeps, principal: Principal, input: ConfigRef): Promise<{ id: string }> {
  const config = await loadVisible(deps, principal, input.config);
  assertWritable(principal, config, "configs");
  const { records } = deps;
  const refs = new Set([config.id, config.slug].filter(Boolean));
  const blocking = await workspaceStore(records).list(principal.organisationId, {
    limit: 1,
    filter: (workspace) => refs.has(workspace.defaults?.user_api_key_config ?? ""),
  });
  const workspace = blocking.items[0];
  if (workspace) {
    throw new Conflict(
      `Config '${config.slug ?? config.id}' is the default user API key config of workspace '${workspace.slug ?? workspace.id}'; clear defaults.user_api_key_config first.`,
      { param: "id" },
    );
  }
  await configStore(records).delete(config);
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: `CONFIG#${config.id}`, prefix: "VERSION#", limit: 100, cursor });
    for (const item of page.items) await records.delete(item.pk, item.sk);
    cursor = page.cursor;
  } while (cursor);
  await savedResourceChanged(
    deps,
    principal,
    { action: "delete", resourceType: "config", before: config },
    presentConfig,
  );
  return { id: config.id };
}
