import type { Principal, WorkspaceRole } from "../../auth/principal.ts";
import { type ControlDeps, audit } from "../../control/deps.ts";
import { joinWorkspace } from "../../control/workspaces/join.ts";
import { getMembership, removeMembership, updateMembershipRole } from "../../control/workspaces/members.ts";
import { getOrganisation } from "../../control/organisation/store.ts";
import { type User, userStore } from "../../control/users/store.ts";
import { workspaceStore } from "../../control/workspaces/store.ts";
import { listAll, mappingMatches, scimGroupStore, scimMappingStore } from "./records.ts";

/**
 * Workspace memberships that follow group membership: a user in a group mapped to a workspace is a member of
 * it with the mapping's role (the higher one when several groups map the same workspace); leaving the group,
 * unmapping it or being deactivated takes the membership away. Only memberships SCIM granted are managed (the
 * user's `scim_workspaces`): a membership an admin added by hand is left alone.
 */

const ROLE_RANK: Record<WorkspaceRole, number> = { member: 1, manager: 2 };

/** Workspace id -> role that the user's groups grant (none for a deactivated user). */
export async function desiredMemberships(deps: ControlDeps, user: User): Promise<Map<string, WorkspaceRole>> {
  const desired = new Map<string, WorkspaceRole>();
  if (user.active === false) return desired;
  const groups = await listAll(scimGroupStore(deps.records), user.organisationId, (group) =>
    group.members.some((member) => member.value === user.id),
  );
  if (groups.length === 0) return desired;
  const mappings = await listAll(scimMappingStore(deps.records), user.organisationId);
  for (const group of groups) {
    for (const mapping of mappings) {
      if (!mappingMatches(mapping, group)) continue;
      const current = desired.get(mapping.workspace_id);
      if (!current || ROLE_RANK[mapping.role] > ROLE_RANK[current]) desired.set(mapping.workspace_id, mapping.role);
    }
  }
  return desired;
}

/** Brings one user's SCIM-granted memberships in line with their groups; audits each change. */
export async function reconcileUser(deps: ControlDeps, principal: Principal, userId: string): Promise<void> {
  const users = userStore(deps.records);
  const user = await users.get(principal.organisationId, userId);
  if (!user) return;
  const desired = await desiredMemberships(deps, user);
  const granted = new Set((user.scim_workspaces as string[] | undefined) ?? []);
  const managed = new Set<string>();
  let organisation: Awaited<ReturnType<typeof getOrganisation>> | undefined;

  for (const [workspaceId, role] of desired) {
    const existing = await getMembership(deps.records, workspaceId, user.id);
    if (existing) {
      // Someone else's membership (added by hand) stays as it is; one SCIM granted follows the mapping.
      if (!granted.has(workspaceId)) continue;
      managed.add(workspaceId);
      if (existing.role !== role) {
        await updateMembershipRole(deps.records, existing, role);
        await auditMembership(deps, principal, "update", user.id, workspaceId, existing.role, role);
      }
      continue;
    }
    const workspace = await workspaceStore(deps.records).get(principal.organisationId, workspaceId);
    if (!workspace) continue; // deleted since it was mapped
    organisation ??= await getOrganisation(deps.records, principal.organisationId);
    await joinWorkspace(deps.records, { organisation, workspace, user, role, createdBy: principal.keyId });
    managed.add(workspaceId);
    await auditMembership(deps, principal, "create", user.id, workspaceId, undefined, role);
  }
  for (const workspaceId of granted) {
    if (managed.has(workspaceId)) continue;
    const existing = await getMembership(deps.records, workspaceId, user.id);
    if (!existing) continue;
    await removeMembership(deps.records, workspaceId, user.id);
    await auditMembership(deps, principal, "delete", user.id, workspaceId, existing.role, undefined);
  }
  const next = [...managed].sort();
  const before = [...granted].sort();
  if (next.join() !== before.join()) await users.update(user, { scim_workspaces: next });
}

function auditMembership(
  deps: ControlDeps,
  principal: Principal,
  action: "create" | "update" | "delete",
  userId: string,
  workspaceId: string,
  before: WorkspaceRole | undefined,
  after: WorkspaceRole | undefined,
) {
  return audit(deps, principal, {
    action,
    resourceType: "workspace_member",
    resourceId: userId,
    workspaceId,
    before: before ? { user_id: userId, workspace_id: workspaceId, role: before } : undefined,
    after: after ? { user_id: userId, workspace_id: workspaceId, role: after, source: "scim" } : undefined,
  });
}
