import type { Principal } from "../../auth/principal.ts";
import { holdsScope, isOrganisationWide, requireScope, workspaceScope } from "../../auth/scopes.ts";
import { checkSpecProblem } from "../../inference/guardrails/checks/registry.ts";
import { type CheckSpec, DEFAULT_CHECK_TIMEOUT_MS, type GuardrailActions } from "../../inference/guardrails/types.ts";
import type { Records, Secrets } from "../../store/ports.ts";
import type { ControlDeps } from "../deps.ts";
import { Conflict, Forbidden, Invalid, NotFound } from "../errors.ts";
import { maskCheckSecrets, openCheckSecrets, restoreCheckSecrets, sealCheckSecrets } from "./secrets.ts";
import type { GuardrailActionsInput, GuardrailCreateInput, GuardrailUpdateInput } from "./schemas.ts";
import { type GuardrailResource, guardrailStore, guardrailsChanged } from "./store.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import { findOrganisation } from "../organisation/store.ts";
import { type CountedPage, type PageRequest, offsetOf, offsetPage, readPage } from "../paging.ts";
import { assertWritable, boundWorkspace, isoTime } from "../credentials/credentials.ts";
import { savedResourceChanged } from "../saved-resources.ts";
import { workspaceStore } from "../workspaces/store.ts";

/**
 * Saved guardrails (`/v1/guardrails`, Portkey's /guardrails): CRUD and versions (every create and update stores
 * the guardrail as version n). A guardrail belongs to one workspace or to the organisation; every action on a
 * workspace's guardrail needs `guardrails.<action>`, on an organisation-level one
 * `organisation_guardrails.<action>` (the route admits either scope, this module checks the one that applies).
 * Workspace-bound callers see their workspace's and the organisation-level guardrails, and change only their
 * workspace's. Checks are validated by the check registry; secret parameters are stored sealed (the guardrail
 * and its versions) and shown masked (guardrail-secrets.ts). Every change tells the guardrail caches
 * (`guardrailsChanged`).
 */

/** Creating and updating guardrails seals their secret parameters. */
export interface GuardrailDeps extends ControlDeps {
  secrets: Secrets;
}

export type GuardrailView = ReturnType<typeof presentGuardrail>;

type GuardrailAction = "create" | "read" | "list" | "update" | "delete";

/** The scope an action on a guardrail needs: a workspace's (`guardrails.*`) or an organisation-level one's. */
export const guardrailScope = (guardrail: { workspaceId?: string }, action: GuardrailAction) =>
  `${guardrail.workspaceId ? "guardrails" : "organisation_guardrails"}.${action}`;

const DEFAULT_ACTIONS: GuardrailActions = {
  deny: false,
  async: false,
  soft_deny_200: false,
  on_error: "open",
  timeout_ms: DEFAULT_CHECK_TIMEOUT_MS,
};

export function presentGuardrail(guardrail: GuardrailResource) {
  return {
    id: guardrail.id,
    object: "guardrail",
    slug: guardrail.slug ?? null,
    name: guardrail.name,
    organisation_id: guardrail.organisationId,
    workspace_id: guardrail.workspaceId ?? null,
    status: guardrail.status,
    checks: maskCheckSecrets(guardrail.checks),
    actions: guardrail.actions,
    version: guardrail.version,
    version_id: String(guardrail.version),
    owner_id: guardrail.createdBy ?? null,
    updated_by: guardrail.updatedBy ?? null,
    created_at: isoTime(guardrail.createdAt),
    last_updated_at: isoTime(guardrail.updatedAt),
  };
}

// --- versions ------------------------------------------------------------------------------------------------

/** Every version of a guardrail (the current one included): pk `GUARDRAIL#<id>`, sk `VERSION#<n, zero-padded>`. */
const versionKey = (guardrailId: string, version: number) => ({
  pk: `GUARDRAIL#${guardrailId}`,
  sk: `VERSION#${String(version).padStart(8, "0")}`,
});

async function writeVersion(records: Records, guardrail: GuardrailResource, principal: Principal): Promise<void> {
  await records.put({
    ...versionKey(guardrail.id, guardrail.version),
    guardrailId: guardrail.id,
    organisationId: guardrail.organisationId,
    version: guardrail.version,
    name: guardrail.name,
    slug: guardrail.slug,
    checks: guardrail.checks,
    actions: guardrail.actions,
    createdAt: guardrail.updatedAt,
    createdBy: principal.userId ?? principal.keyId,
  });
}

async function deleteVersions(records: Records, guardrailId: string): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: `GUARDRAIL#${guardrailId}`, prefix: "VERSION#", limit: 100, cursor });
    for (const item of page.items) await records.delete(item.pk, item.sk);
    cursor = page.cursor;
  } while (cursor);
}

// --- rules -----------------------------------------------------------------------------------------------------

function assertOwnOrganisation(principal: Principal, organisationId: string | undefined): void {
  if (organisationId !== undefined && organisationId !== principal.organisationId)
    throw new Forbidden("This key cannot access another organisation.", { code: "organisation_forbidden" });
}

/** A guardrail the caller may see and holds the action's scope for (NotFound alike for other workspaces'). */
async function loadVisible(
  deps: ControlDeps,
  principal: Principal,
  idOrSlug: string,
  action: GuardrailAction,
): Promise<GuardrailResource> {
  const guardrail = await guardrailStore(deps.records).get(principal.organisationId, idOrSlug);
  const bound = boundWorkspace(principal);
  if (!guardrail || (bound && guardrail.workspaceId && guardrail.workspaceId !== bound))
    throw new NotFound(`No guardrail '${idOrSlug}'.`, { code: "guardrail_not_found" });
  requireScope(principal, guardrailScope(guardrail, action));
  return guardrail;
}

/** The workspace id a workspace reference (id or slug) names; Invalid when there is none. */
async function workspaceIdOf(deps: ControlDeps, principal: Principal, reference: string): Promise<string> {
  const workspace = await workspaceStore(deps.records).get(principal.organisationId, reference);
  if (!workspace)
    throw new Invalid(`No workspace '${reference}'.`, { param: "workspace_id", code: "workspace_not_found" });
  return workspace.id;
}

/**
 * Where a new guardrail goes: a workspace reference, or undefined for the organisation. `workspace_id` when
 * given (a workspace-bound caller: its own only); else the organisation for organisation-wide callers, and the
 * caller's own workspace for workspace-bound ones, which may not ask for the organisation (`organisation_id`).
 */
function placeOf(principal: Principal, input: GuardrailCreateInput): string | undefined {
  assertOwnOrganisation(principal, input.organisation_id);
  if (input.workspace_id !== undefined) return workspaceScope(principal, input.workspace_id);
  if (isOrganisationWide(principal)) return undefined;
  if (input.organisation_id === undefined && principal.workspaceId) return principal.workspaceId;
  throw new Forbidden("This key is bound to a workspace: it cannot create organisation-level guardrails.", {
    code: "workspace_forbidden",
  });
}

/**
 * The checks to store: masked secrets sent back restored from `previous` (the stored checks, opened), then each
 * check validated by its definition on plaintext (parameters replaced by their parsed form, defaults filled
 * in), then every secret parameter sealed.
 */
async function checkedChecks(secrets: Secrets, checks: CheckSpec[], previous?: CheckSpec[]): Promise<CheckSpec[]> {
  const restored = restoreCheckSecrets(checks, previous && (await openCheckSecrets(secrets, previous)));
  for (const [index, check] of restored.entries()) {
    const problem = await checkSpecProblem(check);
    if (problem) {
      const param = `checks[${index}].${problem.path}`;
      throw new Invalid(`Invalid value for '${param}': ${problem.message}`, {
        param,
        code: problem.path === "id" ? "unknown_check" : "invalid_check_parameters",
      });
    }
  }
  return sealCheckSecrets(secrets, restored);
}

/** An update may name where the guardrail is (`workspace_id`, `organisation_id`), never somewhere else. */
async function assertSamePlace(
  deps: ControlDeps,
  principal: Principal,
  guardrail: GuardrailResource,
  body: GuardrailUpdateInput,
): Promise<void> {
  assertOwnOrganisation(principal, body.organisation_id);
  if (body.workspace_id === undefined) return;
  if ((await workspaceIdOf(deps, principal, body.workspace_id)) === guardrail.workspaceId) return;
  throw new Invalid(
    `Guardrail '${guardrail.slug ?? guardrail.id}' is not in workspace '${body.workspace_id}', and a guardrail cannot move; create a new one there.`,
    { param: "workspace_id", code: "guardrail_cannot_move" },
  );
}

/** `base` with the fields sent (`null` removes `on_success` / `on_fail`); an async guardrail cannot block. */
function actionsFrom(base: GuardrailActions, input: GuardrailActionsInput | undefined): GuardrailActions {
  const actions: Record<string, unknown> = { ...base };
  for (const [field, value] of Object.entries(input ?? {})) {
    if (value === null) delete actions[field];
    else if (value !== undefined) actions[field] = value;
  }
  const result = actions as unknown as GuardrailActions;
  const blocking = result.deny ? "deny" : result.soft_deny_200 ? "soft_deny_200" : undefined;
  if (result.async && blocking) {
    throw new Invalid(
      `Invalid value for 'actions.async': an async guardrail only records its verdict and cannot block, so it cannot have '${blocking}'.`,
      { param: "actions.async", code: "invalid_actions" },
    );
  }
  return result;
}

/** Conflict when the organisation's default guardrails name this one. */
async function assertNotDefault(records: Records, guardrail: GuardrailResource): Promise<void> {
  const organisation = await findOrganisation(records, guardrail.organisationId);
  for (const phase of ["input_guardrails", "output_guardrails"] as const) {
    const refs = organisation?.defaults?.[phase] ?? [];
    if (refs.some((ref) => ref.id === guardrail.id || (ref.slug !== null && ref.slug === guardrail.slug))) {
      throw new Conflict(
        `Guardrail '${guardrail.slug ?? guardrail.id}' is one of the organisation's default ${phase}; remove it there first (PUT /v1/admin/organisation/defaults).`,
        { param: "id", code: "guardrail_is_default" },
      );
    }
  }
}

/** A saved guardrail changed: audited and dropped from the saved-resource caches (and the guardrail cache). */
async function guardrailChanged(
  deps: ControlDeps,
  principal: Principal,
  change: { action: string; before?: GuardrailResource; after?: GuardrailResource },
): Promise<GuardrailView | undefined> {
  const view = await savedResourceChanged(deps, principal, { ...change, resourceType: "guardrail" }, presentGuardrail);
  guardrailsChanged(principal.organisationId);
  return view;
}

// --- the service ---------------------------------------------------------------------------------------------

export interface GuardrailTarget {
  /** Id or slug. */
  guardrail: string;
}

export async function createGuardrail(
  deps: GuardrailDeps,
  principal: Principal,
  input: GuardrailCreateInput,
): Promise<GuardrailView> {
  const place = placeOf(principal, input);
  requireScope(principal, guardrailScope({ workspaceId: place }, "create"));
  const workspaceId = place && (await workspaceIdOf(deps, principal, place));
  const checks = await checkedChecks(deps.secrets, input.checks);
  const actions = actionsFrom(DEFAULT_ACTIONS, input.actions);
  const created = await guardrailStore(deps.records).create(principal.organisationId, {
    name: input.name,
    slug: input.slug,
    workspaceId,
    checks,
    actions,
    status: "active",
    createdBy: principal.userId ?? principal.keyId,
  });
  await writeVersion(deps.records, created, principal);
  return (await guardrailChanged(deps, principal, { action: "create", after: created }))!;
}

export interface GuardrailListQuery extends PageRequest {
  /** Portkey's page-number paging (`current_page` × `page_size`); else `cursor`. */
  offset?: number;
  workspace_id?: string;
  organisation_id?: string;
}

/**
 * Newest first, with the total. Workspace-bound callers: their workspace's and organisation-level guardrails;
 * others all, or one workspace's. Only the levels whose `list` scope the caller holds.
 */
export async function listGuardrails(
  deps: ControlDeps,
  principal: Principal,
  input: GuardrailListQuery,
): Promise<CountedPage<GuardrailView>> {
  assertOwnOrganisation(principal, input.organisation_id);
  const workspaceId = workspaceScope(principal, input.workspace_id);
  const bound = boundWorkspace(principal);
  const visible = (guardrail: GuardrailResource) => {
    if (!holdsScope(principal, guardrailScope(guardrail, "list"))) return false;
    if (bound) return !guardrail.workspaceId || guardrail.workspaceId === bound;
    return !workspaceId || guardrail.workspaceId === workspaceId;
  };
  const start = input.offset ?? offsetOf(input.cursor);
  // Read whole (an organisation holds tens of guardrails, not thousands): the total and page numbers need it.
  const all = await guardrailStore(deps.records).listAll(principal.organisationId, visible);
  const page = offsetPage(all, start, input.limit);
  return { ...page, items: page.items.map(presentGuardrail) };
}

/** The guardrail, or one of its versions (`version`, read after the guardrail was found). */
export async function getGuardrail(
  deps: ControlDeps,
  principal: Principal,
  input: GuardrailTarget & { version?: Lazy<number | undefined> },
) {
  const guardrail = await loadVisible(deps, principal, input.guardrail, "read");
  const version = await resolveLazy(input.version);
  if (version === undefined) return presentGuardrail(guardrail);
  const key = versionKey(guardrail.id, version);
  const item = await deps.records.get(key.pk, key.sk);
  if (!item)
    throw new NotFound(`Guardrail '${input.guardrail}' has no version ${version}.`, { code: "version_not_found" });
  return {
    ...presentGuardrail(guardrail),
    name: item.name as string,
    checks: maskCheckSecrets(item.checks as CheckSpec[]),
    actions: item.actions as GuardrailActions,
    version,
    version_id: String(version),
    current_version: guardrail.version,
  };
}

export async function listGuardrailVersions(
  deps: ControlDeps,
  principal: Principal,
  input: GuardrailTarget & { page: Lazy<PageRequest> },
) {
  const guardrail = await loadVisible(deps, principal, input.guardrail, "read");
  const { limit, cursor } = await resolveLazy(input.page);
  const page = await readPage(() =>
    deps.records.query({ partition: `GUARDRAIL#${guardrail.id}`, prefix: "VERSION#", order: "desc", limit, cursor }),
  );
  const items = page.items.map((item) => ({
    object: "guardrail.version",
    guardrail_id: guardrail.id,
    version: item.version as number,
    version_id: String(item.version),
    name: item.name as string,
    slug: (item.slug as string | undefined) ?? null,
    checks: maskCheckSecrets(item.checks as CheckSpec[]),
    actions: item.actions as GuardrailActions,
    created_at: isoTime(item.createdAt as number),
    created_by: (item.createdBy as string | undefined) ?? null,
  }));
  return { items, cursor: page.cursor };
}

/** Updates the fields sent and stores the result as a new version. A guardrail never moves between levels. */
export async function updateGuardrail(
  deps: GuardrailDeps,
  principal: Principal,
  input: GuardrailTarget & { changes: Lazy<GuardrailUpdateInput> },
): Promise<GuardrailView> {
  const current = await loadVisible(deps, principal, input.guardrail, "update");
  assertWritable(principal, current, "guardrails");
  const body = await resolveLazy(input.changes);
  await assertSamePlace(deps, principal, current, body);
  const changes: Partial<GuardrailResource> = { updatedBy: principal.userId ?? principal.keyId };
  if (body.name !== undefined) changes.name = body.name;
  if (body.slug !== undefined) changes.slug = body.slug;
  if (body.checks !== undefined) changes.checks = await checkedChecks(deps.secrets, body.checks, current.checks);
  if (body.actions !== undefined) changes.actions = actionsFrom(current.actions, body.actions);
  const updated = await guardrailStore(deps.records).update(current, changes);
  await writeVersion(deps.records, updated, principal);
  return (await guardrailChanged(deps, principal, { action: "update", before: current, after: updated }))!;
}

/** Refused (Conflict) while the organisation's defaults name it. Its versions go with it. */
export async function deleteGuardrail(
  deps: ControlDeps,
  principal: Principal,
  input: GuardrailTarget,
): Promise<{ id: string }> {
  const guardrail = await loadVisible(deps, principal, input.guardrail, "delete");
  assertWritable(principal, guardrail, "guardrails");
  await assertNotDefault(deps.records, guardrail);
  await guardrailStore(deps.records).delete(guardrail);
  await deleteVersions(deps.records, guardrail.id);
  await guardrailChanged(deps, principal, { action: "delete", before: guardrail });
  return { id: guardrail.id };
}
