import type { Principal } from "../../auth/principal.ts";
import { isOrganisationWide } from "../../auth/scopes.ts";
import type { Records } from "../../store/ports.ts";
import { type ControlDeps, changed } from "../deps.ts";
import { Conflict, Forbidden, NotFound } from "../errors.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import { type CountedPage, offsetPage } from "../paging.ts";
import { actorOf, assertOwnWorkspace, workspaceIdOf } from "./places.ts";
import { type LabelResource, labelStore, promptStore } from "./store.ts";
import type { LabelCreateInput, LabelUpdateInput } from "./schemas.ts";
import { boundWorkspace, isoTime } from "../credentials/credentials.ts";

/**
 * Prompt labels (`/v1/labels`, Portkey's /labels): named, movable pointers to prompt versions (a prompt keeps
 * label id -> version, core/control/prompts/store.ts), called as `<prompt>@<label>`. A label belongs to the
 * organisation or to one workspace; its slug is its name (unique in the organisation). Every organisation has
 * the three default labels `production`, `staging` and `development`, created on first use with fixed ids,
 * and they cannot be renamed or deleted. Deleting a label that still points at a version answers 409 naming
 * the prompt (move or clear the pointer first), so no `@label` call breaks silently.
 */

export const DEFAULT_LABELS = [
  { name: "production", color_code: "#2e7d32", description: "Serves live traffic." },
  { name: "staging", color_code: "#f9a825", description: "Pre-production checks." },
  { name: "development", color_code: "#1565c0", description: "Work in progress." },
] as const;

const isDefaultLabel = (label: LabelResource) => label.isDefault === true;

/** Organisations whose default labels this process has already seen in the store. */
const ensured = new WeakMap<Records, Set<string>>();

/** Creates the organisation's default labels that are missing; idempotent, and safe against concurrent callers. */
export async function ensureDefaultLabels(records: Records, organisationId: string): Promise<void> {
  const seen = ensured.get(records) ?? new Set<string>();
  ensured.set(records, seen);
  if (seen.has(organisationId)) return;
  const store = labelStore(records);
  for (const label of DEFAULT_LABELS) {
    if (await store.get(organisationId, label.name)) continue;
    try {
      await store.create(
        organisationId,
        { ...label, slug: label.name, isDefault: true },
        // Fixed ids: two processes creating the defaults at once write the same records, and one wins.
        { id: `lb_${label.name}_${organisationId}`, createdAt: 0 },
      );
    } catch (error) {
      if (!(error instanceof Conflict) && !(await store.get(organisationId, label.name))) throw error;
    }
  }
  seen.add(organisationId);
}

/** A label by id or slug (its name), the defaults included. */
export async function findLabel(
  records: Records,
  organisationId: string,
  idOrName: string,
): Promise<LabelResource | undefined> {
  await ensureDefaultLabels(records, organisationId);
  return labelStore(records).get(organisationId, idOrName);
}

export function presentLabel(label: LabelResource) {
  return {
    id: label.id,
    object: "label",
    name: label.name,
    slug: label.slug ?? label.name,
    description: label.description ?? null,
    color_code: label.color_code ?? null,
    organisation_id: label.organisationId,
    workspace_id: label.workspaceId ?? null,
    is_universal: isDefaultLabel(label),
    created_by: label.createdBy ?? null,
    created_at: isoTime(label.createdAt),
    last_updated_at: isoTime(label.updatedAt),
  };
}

const visibleTo = (principal: Principal, label: LabelResource) => {
  const bound = boundWorkspace(principal);
  return !bound || !label.workspaceId || label.workspaceId === bound;
};

async function load(deps: ControlDeps, principal: Principal, idOrName: string): Promise<LabelResource> {
  const label = await findLabel(deps.records, principal.organisationId, idOrName);
  if (!label || !visibleTo(principal, label))
    throw new NotFound(`No label '${idOrName}'.`, { code: "label_not_found" });
  return label;
}

/** Changing a label: its workspace's callers or organisation-wide ones; the defaults never. */
function assertChangeable(principal: Principal, label: LabelResource): void {
  if (!label.workspaceId && !isOrganisationWide(principal))
    throw new Forbidden("This key is bound to a workspace: it cannot change organisation-level labels.", {
      code: "workspace_forbidden",
    });
  assertOwnWorkspace(principal, label, "labels");
  if (isDefaultLabel(label))
    throw new Conflict(`'${label.name}' is a default label; it cannot be changed or deleted.`, {
      param: "id",
      code: "label_is_default",
    });
}

export async function createLabel(deps: ControlDeps, principal: Principal, input: LabelCreateInput) {
  if (input.organisation_id !== undefined && input.organisation_id !== principal.organisationId)
    throw new Forbidden("This key cannot access another organisation.", { code: "organisation_forbidden" });
  let workspaceId: string | undefined;
  if (input.workspace_id) workspaceId = await workspaceIdOf(deps.records, principal, input.workspace_id);
  else if (!isOrganisationWide(principal)) {
    workspaceId = boundWorkspace(principal) ?? principal.workspaceId;
    if (!workspaceId || input.organisation_id !== undefined)
      throw new Forbidden("This key is bound to a workspace: it cannot create organisation-level labels.", {
        code: "workspace_forbidden",
      });
  }
  await ensureDefaultLabels(deps.records, principal.organisationId);
  const created = await labelStore(deps.records).create(principal.organisationId, {
    name: input.name,
    slug: input.name,
    description: input.description,
    color_code: input.color_code,
    workspaceId,
    createdBy: actorOf(principal),
  });
  await changed(deps, principal, { action: "create", resourceType: "label", after: created }, presentLabel);
  return presentLabel(created);
}

export interface LabelListQuery {
  limit: number;
  offset: number;
  workspace_id?: string;
  search?: string;
}

/** The organisation's labels and the workspace's (the caller's, or `workspace_id`'s); the defaults first. */
export async function listLabels(
  deps: ControlDeps,
  principal: Principal,
  query: LabelListQuery,
): Promise<CountedPage<ReturnType<typeof presentLabel>>> {
  await ensureDefaultLabels(deps.records, principal.organisationId);
  const workspaceId = query.workspace_id
    ? await workspaceIdOf(deps.records, principal, query.workspace_id)
    : boundWorkspace(principal);
  const needle = query.search?.toLowerCase();
  const all = await labelStore(deps.records).listAll(principal.organisationId, (label) => {
    if (workspaceId && label.workspaceId && label.workspaceId !== workspaceId) return false;
    return !needle || label.name.toLowerCase().includes(needle);
  });
  all.sort((a, b) => Number(isDefaultLabel(b)) - Number(isDefaultLabel(a)));
  const page = offsetPage(all, query.offset, query.limit);
  return { ...page, items: page.items.map(presentLabel) };
}

export async function getLabel(deps: ControlDeps, principal: Principal, input: { label: string }) {
  return presentLabel(await load(deps, principal, input.label));
}

export async function updateLabel(
  deps: ControlDeps,
  principal: Principal,
  input: { label: string; changes: Lazy<LabelUpdateInput> },
) {
  const current = await load(deps, principal, input.label);
  assertChangeable(principal, current);
  const body = await resolveLazy(input.changes);
  const changes: Partial<LabelResource> = {};
  if (body.name !== undefined) Object.assign(changes, { name: body.name, slug: body.name });
  if (body.description !== undefined) changes.description = body.description;
  if (body.color_code !== undefined) changes.color_code = body.color_code;
  const updated = await labelStore(deps.records).update(current, changes);
  await changed(
    deps,
    principal,
    { action: "update", resourceType: "label", before: current, after: updated },
    presentLabel,
  );
  return presentLabel(updated);
}

/** Refused (409 naming the prompt) while a prompt's label pointer uses it. */
export async function deleteLabel(deps: ControlDeps, principal: Principal, input: { label: string }) {
  const label = await load(deps, principal, input.label);
  assertChangeable(principal, label);
  const [user] = await promptStore(deps.records).listAll(principal.organisationId, (prompt) =>
    Object.hasOwn(prompt.labels, label.id),
  );
  if (user)
    throw new Conflict(
      `Label '${label.name}' points at version ${user.labels[label.id]} of prompt '${user.slug ?? user.id}'; move that label elsewhere first.`,
      { param: "id", code: "label_in_use" },
    );
  await labelStore(deps.records).delete(label);
  await changed(deps, principal, { action: "delete", resourceType: "label", before: label }, presentLabel);
  return { id: label.id };
}
