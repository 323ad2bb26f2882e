import type { Principal, WorkspaceRole } from "../../auth/principal.ts";
import { requireOrganisationAdmin } from "../../control/access.ts";
import { type ControlDeps, audit } from "../../control/deps.ts";
import { Conflict, Invalid, NotFound } from "../../control/errors.ts";
import { workspaceStore } from "../../control/workspaces/store.ts";
import { reconcileUser } from "./provisioning.ts";
import { type ScimGroupMapping, groupSlug, listAll, scimGroupStore, scimMappingStore } from "./records.ts";

/**
 * Group mappings (organisation admins): a SCIM group, by id or displayName, to a workspace and role. Spec 7: a
 * mapping whose role differs from the group's existing mapping to that workspace is refused (409), as is the
 * same mapping twice. Creating or deleting one re-provisions the group's members.
 */

const ROLES: WorkspaceRole[] = ["member", "manager"];
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

export function presentMapping(mapping: ScimGroupMapping) {
  return {
    object: "scim_group_mapping",
    id: mapping.id,
    group_id: mapping.group_id ?? null,
    group_display_name: mapping.group_display_name,
    workspace_id: mapping.workspace_id,
    role: mapping.role,
    created_at: iso(mapping.createdAt),
  };
}

export type MappingView = ReturnType<typeof presentMapping>;

export interface MappingInput {
  group?: unknown;
  workspace_id?: unknown;
  role?: unknown;
}

/** Re-provisions the members of every group a mapping names. */
async function reconcileMapped(deps: ControlDeps, principal: Principal, mapping: ScimGroupMapping) {
  const groups = await listAll(scimGroupStore(deps.records), principal.organisationId, (group) =>
    mapping.group_id ? group.id === mapping.group_id : group.slug === groupSlug(mapping.group_display_name),
  );
  const ids = new Set(groups.flatMap((group) => group.members.map((member) => member.value)));
  for (const id of ids) await reconcileUser(deps, principal, id);
}

export async function createMapping(
  deps: ControlDeps,
  principal: Principal,
  input: MappingInput,
): Promise<MappingView> {
  requireOrganisationAdmin(principal);
  const organisationId = principal.organisationId;
  if (typeof input.group !== "string" || input.group.trim() === "")
    throw new Invalid("'group' (a SCIM group id or displayName) is required.", { param: "group" });
  if (typeof input.workspace_id !== "string" || input.workspace_id === "")
    throw new Invalid("'workspace_id' is required.", { param: "workspace_id" });
  const role = (input.role ?? "member") as WorkspaceRole;
  if (!ROLES.includes(role)) throw new Invalid(`'role' must be one of ${ROLES.join(", ")}.`, { param: "role" });
  const workspace = await workspaceStore(deps.records).get(organisationId, input.workspace_id);
  if (!workspace)
    throw new Invalid(`No workspace '${input.workspace_id}'.`, { param: "workspace_id", code: "workspace_not_found" });

  const groups = scimGroupStore(deps.records);
  const ref = input.group.trim();
  const group = await groups.get(organisationId, groups.isId(ref) ? ref : groupSlug(ref));
  if (!group && groups.isId(ref))
    throw new Invalid(`No SCIM group '${ref}'.`, { param: "group", code: "group_not_found" });
  const displayName = group?.displayName ?? ref;
  const sameGroup = (mapping: ScimGroupMapping) =>
    (group && mapping.group_id === group.id) || groupSlug(mapping.group_display_name) === groupSlug(displayName);

  const existing = await listAll(
    scimMappingStore(deps.records),
    organisationId,
    (mapping) => mapping.workspace_id === workspace.id && sameGroup(mapping),
  );
  const conflicting = existing.find((mapping) => mapping.role !== role);
  if (conflicting) {
    throw new Conflict(
      `Group '${displayName}' is already mapped to workspace '${workspace.slug}' with role '${conflicting.role}'.`,
      { param: "role", code: "scim_role_conflict" },
    );
  }
  if (existing.length > 0)
    throw new Conflict(`Group '${displayName}' is already mapped to this workspace.`, { param: "group" });

  const mapping = await scimMappingStore(deps.records).create(organisationId, {
    group_id: group?.id ?? null,
    group_display_name: displayName,
    workspace_id: workspace.id,
    role,
  });
  const view = presentMapping(mapping);
  await audit(deps, principal, {
    action: "create",
    resourceType: "scim_group_mapping",
    resourceId: mapping.id,
    workspaceId: workspace.id,
    after: view,
  });
  await reconcileMapped(deps, principal, mapping);
  return view;
}

export async function listMappings(deps: ControlDeps, principal: Principal): Promise<MappingView[]> {
  requireOrganisationAdmin(principal);
  return (await listAll(scimMappingStore(deps.records), principal.organisationId)).map(presentMapping);
}

export async function getMapping(deps: ControlDeps, principal: Principal, id: string): Promise<MappingView> {
  requireOrganisationAdmin(principal);
  const mapping = await scimMappingStore(deps.records).get(principal.organisationId, id);
  if (!mapping) throw new NotFound(`No SCIM group mapping '${id}'.`, { code: "scim_group_mapping_not_found" });
  return presentMapping(mapping);
}

export async function deleteMapping(deps: ControlDeps, principal: Principal, id: string): Promise<void> {
  requireOrganisationAdmin(principal);
  const store = scimMappingStore(deps.records);
  const mapping = await store.get(principal.organisationId, id);
  if (!mapping) throw new NotFound(`No SCIM group mapping '${id}'.`, { code: "scim_group_mapping_not_found" });
  await store.delete(mapping);
  await audit(deps, principal, {
    action: "delete",
    resourceType: "scim_group_mapping",
    resourceId: mapping.id,
    workspaceId: mapping.workspace_id,
    before: presentMapping(mapping),
  });
  await reconcileMapped(deps, principal, mapping);
}

/** Spec 4.8 `DELETE /scim/workspaces/{workspace}/groups/{group}`: every mapping of that group to that workspace. */
export async function unmapGroupFromWorkspace(
  deps: ControlDeps,
  principal: Principal,
  input: { workspace: string; group: string },
): Promise<void> {
  requireOrganisationAdmin(principal);
  const workspace = await workspaceStore(deps.records).get(principal.organisationId, input.workspace);
  if (!workspace) throw new NotFound(`No workspace '${input.workspace}'.`, { code: "workspace_not_found" });
  const groups = scimGroupStore(deps.records);
  const group = await groups.get(
    principal.organisationId,
    groups.isId(input.group) ? input.group : groupSlug(input.group),
  );
  const slug = groupSlug(group?.displayName ?? input.group);
  const mappings = await listAll(
    scimMappingStore(deps.records),
    principal.organisationId,
    (mapping) =>
      mapping.workspace_id === workspace.id &&
      ((group && mapping.group_id === group.id) || groupSlug(mapping.group_display_name) === slug),
  );
  if (mappings.length === 0)
    throw new NotFound(`Group '${input.group}' is not mapped to this workspace.`, {
      code: "scim_group_mapping_not_found",
    });
  for (const mapping of mappings) await deleteMapping(deps, principal, mapping.id);
}
