import { randomBytes } from "node:crypto";
import type { Records } from "../store/ports.ts";
import { Conflict, Invalid } from "./errors.ts";
import { type OrganisationRecord, findOrganisation, organisationBlocksInlineConfig } from "./organisation.ts";
import { type Resource, ResourceStore } from "./resource-store.ts";
import { configStore } from "./saved-resources.ts";
import type { WorkspaceDefaultsInput } from "./workspaces-schemas.ts";

/**
 * Workspaces: ResourceStore kind WORKSPACE, ids `ws_...`, unique slugs per organisation. The bootstrap
 * workspace (slug `default`, `isDefault: true`) cannot be deleted. Configs named by the defaults are written
 * by the configs work (kind CONFIG, ids `pc_...`); they are stored here by id and shown by slug.
 * The admin API's request schemas live in workspaces-schemas.ts (the data plane imports this module for lookups).
 */

export interface WorkspaceDefaults {
  /** Config id. */
  config_id?: string | null;
  /** Config id (shown as its slug). */
  user_api_key_config?: string | null;
  metadata?: Record<string, string>;
}

export interface Workspace extends Resource {
  slug: string;
  name: string;
  description?: string | null;
  defaults: WorkspaceDefaults;
  security_settings?: { block_inline_config?: boolean | null };
  name_format?: string | null;
  /** Overrides the organisation setting when not null. */
  user_api_key_auto_create?: boolean | null;
  /** Days request logs of this workspace are kept; null: the deployment's GATEWAY_LOG_RETENTION_DAYS. */
  log_retention_days?: number | null;
  /** Overrides the organisation's `log_export_denied_fields` when not null (core/exports/log-exports.ts). */
  log_export_denied_fields?: string[] | null;
  isDefault?: boolean;
}

export const WORKSPACE_KIND = "WORKSPACE";
export const WORKSPACE_ID_PREFIX = "ws";
export const PROMPT_KINDS = ["PROMPT", "PROMPT_PARTIAL"] as const;

export const workspaceStore = (records: Records) =>
  new ResourceStore<Workspace>(records, WORKSPACE_KIND, WORKSPACE_ID_PREFIX);

/**
 * A config by id or slug, in the organisation (a slug in `workspaceId`'s own configs first); Invalid naming
 * `param` when there is none. Returns its id.
 */
export async function resolveConfigRef(
  records: Records,
  organisationId: string,
  ref: string,
  param: string,
  workspaceId?: string,
): Promise<string> {
  const config = await configStore(records).get(organisationId, ref, { workspaceId });
  const status: string = config?.status ?? "";
  if (!config || status === "deleted" || status === "archived") {
    throw new Invalid(`No config '${ref}' in this organisation.`, { param, code: "config_not_found" });
  }
  return config.id;
}

/**
 * Validates and normalises written defaults: config references become ids; `null` clears a field. `workspaceId`:
 * the workspace they are the defaults of, once it exists (its configs' slugs come first).
 */
export async function normaliseDefaults(
  records: Records,
  organisationId: string,
  current: WorkspaceDefaults,
  input: WorkspaceDefaultsInput | undefined,
  workspaceId?: string,
): Promise<WorkspaceDefaults> {
  const next: WorkspaceDefaults = { ...current };
  if (!input) return next;
  for (const field of ["config_id", "user_api_key_config"] as const) {
    const value = input[field];
    if (value === undefined) continue;
    if (value === null) delete next[field];
    else next[field] = await resolveConfigRef(records, organisationId, value, `defaults.${field}`, workspaceId);
  }
  if (input.metadata !== undefined) next.metadata = input.metadata;
  return next;
}

export function slugFromName(name: string): string {
  const base =
    name
      .toLowerCase()
      .normalize("NFKD")
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 50) || "workspace";
  return `${base}-${randomBytes(3).toString("hex")}`;
}

export async function presentWorkspace(records: Records, workspace: Workspace) {
  const configs = configStore(records);
  const slugOf = async (id: string | null | undefined) => {
    if (!id) return null;
    const config = await configs.get(workspace.organisationId, id);
    return config?.slug ?? id;
  };
  const format = workspace.name_format;
  return {
    id: workspace.id,
    object: "workspace",
    slug: workspace.slug,
    name: workspace.name,
    description: workspace.description ?? null,
    display_name: format
      ? format.replaceAll("{name}", workspace.name).replaceAll("{slug}", workspace.slug)
      : workspace.name,
    name_format: format ?? null,
    defaults: {
      config_id: workspace.defaults?.config_id ?? null,
      user_api_key_config: await slugOf(workspace.defaults?.user_api_key_config),
      metadata: workspace.defaults?.metadata ?? {},
    },
    security_settings: { block_inline_config: workspace.security_settings?.block_inline_config ?? null },
    user_api_key_auto_create: workspace.user_api_key_auto_create ?? null,
    log_retention_days: workspace.log_retention_days ?? null,
    log_export_denied_fields: workspace.log_export_denied_fields ?? null,
    is_default: workspace.isDefault === true,
    created_at: new Date(workspace.createdAt * 1000).toISOString(),
    last_updated_at: new Date(workspace.updatedAt * 1000).toISOString(),
  };
}

/** Spec 7: a workspace that still holds shared prompts or partials cannot be deleted. */
export async function hasSharedPrompts(records: Records, workspace: Workspace): Promise<boolean> {
  for (const kind of PROMPT_KINDS) {
    const store = new ResourceStore<Resource>(records, kind, kind === "PROMPT" ? "pp" : "ppp");
    const page = await store.list(workspace.organisationId, {
      limit: 1,
      filter: (prompt) => prompt.workspaceId === workspace.id && prompt.shared === true,
    });
    if (page.items.length > 0) return true;
  }
  return false;
}

/** Throws Conflict unless the workspace may be deleted (not the default; no shared prompts or partials). */
export async function assertDeletable(records: Records, workspace: Workspace): Promise<void> {
  if (workspace.isDefault) throw new Conflict("The default workspace cannot be deleted.");
  if (await hasSharedPrompts(records, workspace)) {
    throw new Conflict("This workspace still has shared prompts or partials; unshare or delete them first.");
  }
}

/** Workspaces whose defaults name this config (spec 7: such a config cannot be deleted). For the configs work. */
export async function workspacesUsingConfig(
  records: Records,
  organisationId: string,
  configId: string,
): Promise<Workspace[]> {
  const found: Workspace[] = [];
  const store = workspaceStore(records);
  let cursor: string | undefined;
  do {
    const page = await store.list(organisationId, {
      limit: 100,
      cursor,
      filter: (ws) => ws.defaults?.user_api_key_config === configId || ws.defaults?.config_id === configId,
    });
    found.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return found;
}

/**
 * Whether inline provider/config selection is blocked for a request (spec 5.5): env BLOCK_INLINE_CONFIG forces
 * it; else the workspace's `security_settings.block_inline_config` when set; else the organisation's setting.
 */
export async function blockInlineConfigFor(
  records: Records,
  forcedByEnv: boolean,
  organisationId: string,
  workspaceId?: string,
): Promise<boolean> {
  if (forcedByEnv) return true;
  if (workspaceId) {
    const workspace = await workspaceStore(records).get(organisationId, workspaceId);
    const override = workspace?.security_settings?.block_inline_config;
    if (typeof override === "boolean") return override;
  }
  const organisation = await findOrganisation(records, organisationId);
  return organisation ? organisationBlocksInlineConfig(organisation) : false;
}

/** `user_api_key_auto_create` for members joining a workspace: workspace override, then organisation settings. */
export function autoCreateUserKeys(organisation: OrganisationRecord, workspace: Workspace): boolean {
  if (typeof workspace.user_api_key_auto_create === "boolean") return workspace.user_api_key_auto_create;
  const settings = organisation.settings ?? {};
  if (workspace.isDefault && typeof settings.default_workspace_user_api_key_auto_create === "boolean") {
    return settings.default_workspace_user_api_key_auto_create;
  }
  return settings.user_api_key_auto_create === true;
}
