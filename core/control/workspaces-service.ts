import type { Principal, WorkspaceRole } from "../auth/principal.ts";
import { isOrganisationWide } from "../auth/scopes.ts";
import type { Page } from "../store/ports.ts";
import { requireOrganisationAdmin } from "./access.ts";
import { type ControlDeps, audit } from "./deps.ts";
import { Conflict, Invalid, NotFound, isConflict } from "./errors.ts";
import { joinWorkspace } from "./join.ts";
import { type Lazy, resolveLazy } from "./lazy.ts";
import {
  type Membership,
  getMembership,
  listMembers,
  removeAllMembers,
  removeMembership,
  updateMembershipRole,
} from "./members.ts";
import { getOrganisation } from "./organisation.ts";
import { type PageRequest, readPage } from "./paging.ts";
import { type User, userStore } from "./users.ts";
import {
  type Workspace,
  assertDeletable,
  normaliseDefaults,
  presentWorkspace,
  slugFromName,
  workspaceStore,
} from "./workspaces.ts";
import type { WorkspaceCreateInput, WorkspaceUpdateInput } from "./workspaces-schemas.ts";

/**
 * Workspaces and their members (spec 2.11, 4.8, 5.5): organisation admins create, change and delete them; a
 * workspace key or workspace-bound JWT may read its own workspace and its members. Every change is audited.
 */

export interface WorkspaceDeps extends ControlDeps {
  /** Drops this process's cached organisation and workspace settings (block_inline_config, log retention). */
  organisationChanged(organisationId: string): void;
}

export type WorkspaceView = Awaited<ReturnType<typeof presentWorkspace>>;
export type MemberView = Awaited<ReturnType<typeof presentMember>>;

/** Who to add, by user id or email; `param` names the input field for errors about this entry. */
export interface MemberToAdd {
  user: string | undefined;
  role: WorkspaceRole;
  param: string;
}

/**
 * The workspace by id or slug; NotFound when unknown or when the caller is bound to another workspace (alike,
 * so that another workspace's ids are no existence oracle).
 */
async function loadWorkspace(deps: ControlDeps, principal: Principal, idOrSlug: string): Promise<Workspace> {
  const workspace = await workspaceStore(deps.records).get(principal.organisationId, idOrSlug);
  if (!workspace || (!isOrganisationWide(principal) && principal.workspaceId !== workspace.id))
    throw new NotFound(`No workspace '${idOrSlug}'.`, { code: "workspace_not_found" });
  return workspace;
}

async function loadMember(deps: ControlDeps, workspace: Workspace, userId: string): Promise<Membership> {
  const membership = await getMembership(deps.records, workspace.id, userId);
  if (!membership)
    throw new NotFound(`User '${userId}' is not a member of this workspace.`, { code: "member_not_found" });
  return membership;
}

async function presentMember(deps: ControlDeps, membership: Membership) {
  const user = await userStore(deps.records).get(membership.organisationId, membership.userId);
  return {
    object: "workspace_member",
    id: membership.userId,
    user_id: membership.userId,
    workspace_id: membership.workspaceId,
    role: membership.role,
    email: user?.email ?? null,
    name: user?.name ?? null,
    first_name: user?.first_name ?? null,
    last_name: user?.last_name ?? null,
    organisation_role: user?.role ?? null,
    created_at: new Date(membership.createdAt * 1000).toISOString(),
    last_updated_at: new Date(membership.updatedAt * 1000).toISOString(),
  };
}

// --- workspaces --------------------------------------------------------------------------------------------

/** Admins see every workspace; others only their own. `name` filters by a case-insensitive substring. */
export async function listWorkspaces(
  deps: ControlDeps,
  principal: Principal,
  input: PageRequest & { name?: string },
): Promise<Page<WorkspaceView>> {
  const name = input.name?.toLowerCase();
  const admin = isOrganisationWide(principal);
  const page = await readPage(() =>
    workspaceStore(deps.records).list(principal.organisationId, {
      limit: input.limit,
      cursor: input.cursor,
      filter: (ws) => (admin || ws.id === principal.workspaceId) && (!name || ws.name.toLowerCase().includes(name)),
    }),
  );
  const items = await Promise.all(page.items.map((ws) => presentWorkspace(deps.records, ws)));
  return { items, cursor: page.cursor };
}

/**
 * Creates a workspace; without a slug one is made from the name (retried on the rare collision). A user
 * creating a workspace (JWT or user key of an admin) becomes its manager.
 */
export async function createWorkspace(
  deps: ControlDeps,
  principal: Principal,
  lazyInput: Lazy<WorkspaceCreateInput>,
): Promise<WorkspaceView> {
  requireOrganisationAdmin(principal);
  const input = await resolveLazy(lazyInput);
  const store = workspaceStore(deps.records);
  const defaults = await normaliseDefaults(deps.records, principal.organisationId, {}, input.defaults);
  const fields = {
    name: input.name,
    description: input.description ?? null,
    defaults,
    security_settings: input.security_settings ?? {},
    name_format: input.name_format ?? null,
    user_api_key_auto_create: input.user_api_key_auto_create ?? null,
    log_retention_days: input.log_retention_days ?? null,
    log_export_denied_fields: input.log_export_denied_fields ?? null,
  };
  let workspace: Workspace | undefined;
  if (input.slug) workspace = await store.create(principal.organisationId, { ...fields, slug: input.slug });
  for (let attempt = 0; !workspace; attempt++) {
    try {
      workspace = await store.create(principal.organisationId, { ...fields, slug: slugFromName(input.name) });
    } catch (error) {
      if (!isConflict(error) || attempt >= 3) throw error;
    }
  }
  if (principal.userId) {
    const user = await userStore(deps.records).get(principal.organisationId, principal.userId);
    if (user) {
      const organisation = await getOrganisation(deps.records, principal.organisationId);
      await joinWorkspace(deps.records, { organisation, workspace, user, role: "manager", createdBy: principal.keyId });
    }
  }
  const view = await presentWorkspace(deps.records, workspace);
  await audit(deps, principal, {
    action: "create",
    resourceType: "workspace",
    resourceId: workspace.id,
    workspaceId: workspace.id,
    after: view,
  });
  return view;
}

export async function getWorkspace(
  deps: ControlDeps,
  principal: Principal,
  input: { workspace: string },
): Promise<WorkspaceView> {
  return presentWorkspace(deps.records, await loadWorkspace(deps, principal, input.workspace));
}

/** Changes the fields given; `null` clears a nullable one. The default workspace keeps its slug. */
export async function updateWorkspace(
  deps: WorkspaceDeps,
  principal: Principal,
  input: { workspace: string; changes: Lazy<WorkspaceUpdateInput> },
): Promise<WorkspaceView> {
  requireOrganisationAdmin(principal);
  const current = await loadWorkspace(deps, principal, input.workspace);
  const body = await resolveLazy(input.changes);
  const changes: Partial<Workspace> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.slug !== undefined) {
    if (current.isDefault && body.slug !== current.slug)
      throw new Invalid("The default workspace's slug cannot change.", { param: "slug" });
    changes.slug = body.slug;
  }
  if (body.description !== undefined) changes.description = body.description;
  if (body.name_format !== undefined) changes.name_format = body.name_format;
  if (body.user_api_key_auto_create !== undefined) changes.user_api_key_auto_create = body.user_api_key_auto_create;
  if (body.log_retention_days !== undefined) changes.log_retention_days = body.log_retention_days;
  if (body.log_export_denied_fields !== undefined) changes.log_export_denied_fields = body.log_export_denied_fields;
  if (body.security_settings !== undefined) {
    changes.security_settings = { ...current.security_settings, ...body.security_settings };
  }
  if (body.defaults !== undefined) {
    changes.defaults = await normaliseDefaults(
      deps.records,
      principal.organisationId,
      current.defaults ?? {},
      body.defaults,
      current.id,
    );
  }
  const updated = await workspaceStore(deps.records).update(current, changes);
  deps.organisationChanged(principal.organisationId);
  const view = await presentWorkspace(deps.records, updated);
  await audit(deps, principal, {
    action: "update",
    resourceType: "workspace",
    resourceId: updated.id,
    workspaceId: updated.id,
    before: await presentWorkspace(deps.records, current),
    after: view,
  });
  return view;
}

/** Deletes a workspace and its memberships (Conflict for the default one, or one still sharing prompts). */
export async function deleteWorkspace(
  deps: WorkspaceDeps,
  principal: Principal,
  input: { workspace: string },
): Promise<{ id: string }> {
  requireOrganisationAdmin(principal);
  const workspace = await loadWorkspace(deps, principal, input.workspace);
  await assertDeletable(deps.records, workspace);
  const before = await presentWorkspace(deps.records, workspace);
  await workspaceStore(deps.records).delete(workspace);
  await removeAllMembers(deps.records, workspace.id);
  deps.organisationChanged(principal.organisationId);
  await audit(deps, principal, {
    action: "delete",
    resourceType: "workspace",
    resourceId: workspace.id,
    workspaceId: workspace.id,
    before,
  });
  return { id: workspace.id };
}

// --- members -----------------------------------------------------------------------------------------------

export async function listWorkspaceMembers(
  deps: ControlDeps,
  principal: Principal,
  input: { workspace: string; query: Lazy<PageRequest & { role?: string }> },
): Promise<Page<MemberView>> {
  const workspace = await loadWorkspace(deps, principal, input.workspace);
  const query = await resolveLazy(input.query);
  const page = await readPage(() => listMembers(deps.records, workspace.id, query.limit, query.cursor));
  const items = await Promise.all(
    page.items.filter((m) => !query.role || m.role === query.role).map((m) => presentMember(deps, m)),
  );
  return { items, cursor: page.cursor };
}

/**
 * Adds users (by id or email) to a workspace. Every entry is checked before any is added, so a bad entry adds
 * nobody. A member who gets a workspace user key (`user_api_key_auto_create`) sees its secret here, once.
 */
export async function addWorkspaceMembers(
  deps: ControlDeps,
  principal: Principal,
  input: { workspace: string; members: Lazy<MemberToAdd[]> },
): Promise<Array<MemberView & { api_key?: { id: string; key: string; workspace_id: string } }>> {
  requireOrganisationAdmin(principal);
  const workspace = await loadWorkspace(deps, principal, input.workspace);
  const members = await resolveLazy(input.members);
  const users = userStore(deps.records);
  const organisation = await getOrganisation(deps.records, principal.organisationId);
  // Every entry is checked first, so a bad entry adds nobody.
  const resolved: Array<{ user: User; role: WorkspaceRole }> = [];
  for (const entry of members) {
    if (!entry.user)
      throw new Invalid("'user_id' is required.", { param: "user_id", code: "missing_required_parameter" });
    const user = await users.get(
      principal.organisationId,
      entry.user.includes("@") ? entry.user.toLowerCase() : entry.user,
    );
    if (!user) throw new NotFound(`No user '${entry.user}' in this organisation.`, { code: "user_not_found" });
    if (await getMembership(deps.records, workspace.id, user.id)) {
      throw new Conflict(`User '${user.id}' is already a member of this workspace.`, { param: entry.param });
    }
    resolved.push({ user, role: entry.role });
  }
  const added = [];
  for (const { user, role } of resolved) {
    const joined = await joinWorkspace(deps.records, {
      organisation,
      workspace,
      user,
      role,
      createdBy: principal.keyId,
    });
    const member = await presentMember(deps, joined.membership);
    await audit(deps, principal, {
      action: "create",
      resourceType: "workspace_member",
      resourceId: `${workspace.id}/${user.id}`,
      workspaceId: workspace.id,
      after: { ...member, api_key_id: joined.apiKey?.id },
    });
    added.push(joined.apiKey ? { ...member, api_key: joined.apiKey } : member);
  }
  return added;
}

export async function getWorkspaceMember(
  deps: ControlDeps,
  principal: Principal,
  input: { workspace: string; user: string },
): Promise<MemberView> {
  const workspace = await loadWorkspace(deps, principal, input.workspace);
  return presentMember(deps, await loadMember(deps, workspace, input.user));
}

export async function updateWorkspaceMember(
  deps: ControlDeps,
  principal: Principal,
  input: { workspace: string; user: string; role: Lazy<WorkspaceRole> },
): Promise<MemberView> {
  requireOrganisationAdmin(principal);
  const workspace = await loadWorkspace(deps, principal, input.workspace);
  const role = await resolveLazy(input.role);
  const current = await loadMember(deps, workspace, input.user);
  const updated = await updateMembershipRole(deps.records, current, role);
  const view = await presentMember(deps, updated);
  await audit(deps, principal, {
    action: "update",
    resourceType: "workspace_member",
    resourceId: `${workspace.id}/${current.userId}`,
    workspaceId: workspace.id,
    before: { role: current.role },
    after: view,
  });
  return view;
}

export async function removeWorkspaceMember(
  deps: ControlDeps,
  principal: Principal,
  input: { workspace: string; user: string },
): Promise<{ id: string }> {
  requireOrganisationAdmin(principal);
  const workspace = await loadWorkspace(deps, principal, input.workspace);
  const current = await loadMember(deps, workspace, input.user);
  await removeMembership(deps.records, workspace.id, current.userId);
  await audit(deps, principal, {
    action: "delete",
    resourceType: "workspace_member",
    resourceId: `${workspace.id}/${current.userId}`,
    workspaceId: workspace.id,
    before: { user_id: current.userId, role: current.role },
  });
  return { id: current.userId };
}
