import type { Principal } from "../../auth/principal.ts";
import type { Page, RecordItem } from "../../store/ports.ts";
import { requireOrganisationAdmin } from "../access.ts";
import { type ControlDeps, audit } from "../deps.ts";
import { Invalid } from "../errors.ts";
import { guardrailsChanged } from "../guardrails/store.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import {
  type GuardrailPhase,
  type OrganisationRecord,
  getOrganisation,
  presentDefaults,
  presentSettings,
  resolveGuardrailRefs,
  updateOrganisation,
} from "./store.ts";
import type { DefaultsUpdateInput, ExclusionsUpdateInput, SettingsUpdateInput } from "./schemas.ts";
import { type CountedPage, type PageRequest, invalidCursor, offsetOf, offsetPage } from "../paging.ts";
import { workspaceStore } from "../workspaces/store.ts";

/**
 * Organisation settings and default guardrails, workspace exclusions from those guardrails and the audit log
 * (spec 5.5), for organisation admins only.
 */

export interface OrganisationDeps extends ControlDeps {
  /** BLOCK_INLINE_CONFIG: the deployment forces block_inline_config on, whatever the organisation says. */
  blockInlineConfigForced: boolean;
  /** Drops this process's cached organisation settings (block_inline_config is read on every request). */
  organisationChanged(organisationId: string): void;
}

export type SettingsView = ReturnType<typeof presentSettings>;
export type DefaultsView = ReturnType<typeof presentDefaults>;
export type ExclusionView = Awaited<ReturnType<typeof presentExclusions>>["items"][number];
export type AuditLogView = ReturnType<typeof presentAudit>;

/** A page of exclusions, with how many the list holds in all. */
export type ExclusionsPage = CountedPage<ExclusionView>;

async function loadOrganisation(deps: ControlDeps, principal: Principal): Promise<OrganisationRecord> {
  requireOrganisationAdmin(principal);
  return getOrganisation(deps.records, principal.organisationId);
}

// --- settings and defaults ---------------------------------------------------------------------------------

export async function getOrganisationSettings(deps: OrganisationDeps, principal: Principal): Promise<SettingsView> {
  return presentSettings(await loadOrganisation(deps, principal), deps.blockInlineConfigForced);
}

/** Sets the fields given; `null` returns a field to its default. */
export async function updateOrganisationSettings(
  deps: OrganisationDeps,
  principal: Principal,
  lazyInput: Lazy<SettingsUpdateInput>,
): Promise<SettingsView> {
  const current = await loadOrganisation(deps, principal);
  const input = await resolveLazy(lazyInput);
  const settings = { ...current.settings };
  for (const [field, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (value === null) delete settings[field as keyof typeof settings];
    else (settings as Record<string, unknown>)[field] = value;
  }
  const updated = await updateOrganisation(deps.records, current, { settings });
  deps.organisationChanged(current.id);
  const forced = deps.blockInlineConfigForced;
  const after = presentSettings(updated, forced);
  await audit(deps, principal, {
    action: "update",
    resourceType: "organisation_settings",
    resourceId: current.id,
    before: presentSettings(current, forced),
    after,
  });
  return after;
}

export async function getOrganisationDefaults(deps: ControlDeps, principal: Principal): Promise<DefaultsView> {
  return presentDefaults(await loadOrganisation(deps, principal));
}

/** Replaces the default guardrails of the phases given (references resolved to `{id, slug}`). */
export async function updateOrganisationDefaults(
  deps: ControlDeps,
  principal: Principal,
  lazyInput: Lazy<DefaultsUpdateInput>,
): Promise<DefaultsView> {
  const current = await loadOrganisation(deps, principal);
  const input = await resolveLazy(lazyInput);
  const defaults = { ...current.defaults };
  for (const phase of ["input_guardrails", "output_guardrails"] as const) {
    const refs = input[phase];
    if (refs !== undefined) defaults[phase] = await resolveGuardrailRefs(deps.records, current.id, phase, refs);
  }
  const updated = await updateOrganisation(deps.records, current, { defaults });
  const after = presentDefaults(updated);
  await audit(deps, principal, {
    action: "update",
    resourceType: "organisation_defaults",
    resourceId: current.id,
    before: presentDefaults(current),
    after,
  });
  // The data plane caches defaults for a few seconds; this process drops them at once.
  guardrailsChanged(principal.organisationId);
  return after;
}

// --- workspace exclusions ----------------------------------------------------------------------------------

async function presentExclusions(
  deps: ControlDeps,
  organisation: OrganisationRecord,
  phase: GuardrailPhase,
  limit: number,
  cursor?: string,
) {
  const page = offsetPage(organisation.exclusions?.[phase] ?? [], offsetOf(cursor), limit);
  const store = workspaceStore(deps.records);
  const items = await Promise.all(
    page.items.map(async (id) => {
      const workspace = await store.get(organisation.id, id);
      return {
        object: "workspace_exclusion",
        id,
        workspace_id: id,
        slug: workspace?.slug ?? null,
        name: workspace?.name ?? null,
      };
    }),
  );
  return { ...page, items };
}

/** The workspaces exempt from the organisation's default guardrails of one phase, in the order they were added. */
export async function listWorkspaceExclusions(
  deps: ControlDeps,
  principal: Principal,
  input: { phase: GuardrailPhase; query: Lazy<PageRequest> },
): Promise<ExclusionsPage> {
  const organisation = await loadOrganisation(deps, principal);
  const query = await resolveLazy(input.query);
  return presentExclusions(deps, organisation, input.phase, query.limit, query.cursor);
}

/**
 * Adds workspaces (ids or slugs) to a phase's exclusions, or replaces the list with `override_existing`.
 * Answers the list's first 100.
 */
export async function updateWorkspaceExclusions(
  deps: ControlDeps,
  principal: Principal,
  input: { phase: GuardrailPhase; changes: Lazy<ExclusionsUpdateInput> },
): Promise<ExclusionsPage> {
  const { phase } = input;
  const current = await loadOrganisation(deps, principal);
  const changes = await resolveLazy(input.changes);
  const param = changes.workspace_ids !== undefined ? "workspace_ids" : "workspaces";
  const requested = changes.workspace_ids ?? changes.workspaces ?? [];
  const store = workspaceStore(deps.records);
  const ids: string[] = [];
  for (const [index, ref] of requested.entries()) {
    const workspace = await store.get(current.id, ref);
    if (!workspace)
      throw new Invalid(`No workspace '${ref}'.`, { param: `${param}[${index}]`, code: "workspace_not_found" });
    if (!ids.includes(workspace.id)) ids.push(workspace.id);
  }
  const before = current.exclusions?.[phase] ?? [];
  const next = changes.override_existing ? ids : [...before, ...ids.filter((id) => !before.includes(id))];
  const updated = await updateOrganisation(deps.records, current, {
    exclusions: { ...current.exclusions, [phase]: next },
  });
  await audit(deps, principal, {
    action: "update",
    resourceType: "workspace_exclusions",
    resourceId: `${current.id}/${phase}`,
    before: { workspace_ids: before },
    after: { workspace_ids: next, override_existing: changes.override_existing },
  });
  guardrailsChanged(principal.organisationId);
  return presentExclusions(deps, updated, phase, 100);
}

// --- audit log ---------------------------------------------------------------------------------------------

export interface AuditLogQuery {
  limit: number;
  cursor?: string;
  resourceType?: string;
  resourceId?: string;
  action?: string;
  workspaceId?: string;
  actorKeyId?: string;
  actorUserId?: string;
  /** ISO times bounding `created_at`. */
  from?: string;
  to?: string;
}

function presentAudit(item: RecordItem) {
  const actor = (item.actor ?? {}) as { keyId?: string; userId?: string; email?: string; kind?: string };
  return {
    object: "audit_log",
    id: item.id,
    created_at: item.createdAt,
    action: item.action,
    resource_type: item.resourceType,
    resource_id: item.resourceId,
    workspace_id: item.workspaceId ?? null,
    actor: {
      type: actor.kind ?? null,
      api_key_id: actor.keyId ?? null,
      user_id: actor.userId ?? null,
      email: actor.email ?? null,
    },
    before: item.before ?? null,
    after: item.after ?? null,
    trace_id: item.traceId ?? null,
  };
}

/** The organisation's audit entries, newest first, filtered; the cursor is the sort key of the last one. */
export async function listAuditLogs(
  deps: ControlDeps,
  principal: Principal,
  lazyQuery: Lazy<AuditLogQuery>,
): Promise<Page<AuditLogView>> {
  requireOrganisationAdmin(principal);
  const query = await resolveLazy(lazyQuery);
  let after: string | undefined;
  if (query.cursor) {
    const text = Buffer.from(query.cursor, "base64url").toString("utf8");
    if (!text.startsWith("after:") || text.length < 8) throw invalidCursor();
    after = text.slice(6);
  }
  const lower = query.from ? new Date(query.from).toISOString() : "0";
  const upperTime = query.to ? `${new Date(query.to).toISOString()}#\uffff` : "\uffff";
  const upper = after && after < upperTime ? after : upperTime;
  const matches = (item: RecordItem) => {
    const actor = (item.actor ?? {}) as { keyId?: string; userId?: string };
    return (
      (!query.resourceType || item.resourceType === query.resourceType) &&
      (!query.resourceId || item.resourceId === query.resourceId) &&
      (!query.action || item.action === query.action) &&
      (!query.workspaceId || item.workspaceId === query.workspaceId) &&
      (!query.actorKeyId || actor.keyId === query.actorKeyId) &&
      (!query.actorUserId || actor.userId === query.actorUserId)
    );
  };
  const items: RecordItem[] = [];
  let next: string | undefined;
  let storeCursor: string | undefined;
  outer: do {
    const page = await deps.records.query({
      partition: `ORG#${principal.organisationId}#AUDIT`,
      index: "gsi1",
      order: "desc",
      from: lower,
      to: upper,
      limit: Math.min(1000, Math.max(query.limit + 1, 50)),
      cursor: storeCursor,
    });
    for (const item of page.items) {
      if (after && String(item.gsi1sk) >= after) continue;
      if (!matches(item)) continue;
      if (items.length === query.limit) {
        next = Buffer.from(`after:${String(items.at(-1)!.gsi1sk)}`).toString("base64url");
        break outer;
      }
      items.push(item);
    }
    storeCursor = page.cursor;
  } while (storeCursor);
  return { items: items.map(presentAudit), cursor: next };
}
