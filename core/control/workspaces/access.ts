import type { WorkspaceAccessBody } from "./access-schemas.ts";

/**
 * Which workspaces may use an organisation-level saved provider (integration or virtual key). Least privilege,
 * like Portkey's workspace provisioning: none until an organisation-level caller enables some
 * (`PUT .../workspaces`) or all (`global_workspace_access.enabled`). A provider created for a workspace serves
 * only that workspace and is never shared.
 */
export interface WorkspaceAccess {
  global: boolean;
  workspaceIds: string[];
}

export const NO_WORKSPACE_ACCESS: WorkspaceAccess = Object.freeze({
  global: false,
  workspaceIds: [],
}) as WorkspaceAccess;

/** The access after a `PUT .../workspaces` body: merged into the current list unless told to override it. */
export function applyWorkspaceAccess(current: WorkspaceAccess | undefined, body: WorkspaceAccessBody): WorkspaceAccess {
  const existing = current ?? NO_WORKSPACE_ACCESS;
  const override = body.override_existing_workspace_access ?? body.override_existing_workspaces_access ?? false;
  const ids = new Set(override ? [] : existing.workspaceIds);
  for (const id of body.workspace_ids ?? []) ids.add(id);
  for (const workspace of body.workspaces ?? []) {
    if (workspace.enabled) ids.add(workspace.id);
    else ids.delete(workspace.id);
  }
  return { global: body.global_workspace_access?.enabled ?? existing.global, workspaceIds: [...ids] };
}

/** May a caller bound to `workspaceId` use a provider owned by `ownerWorkspaceId` (undefined: organisation-level)? */
export function workspaceMayUse(
  workspaceId: string,
  ownerWorkspaceId: string | undefined,
  access: WorkspaceAccess | undefined,
): boolean {
  if (ownerWorkspaceId) return ownerWorkspaceId === workspaceId;
  return access !== undefined && (access.global || access.workspaceIds.includes(workspaceId));
}

/** The `GET/PUT .../workspaces` answer; `object` names each entry (`integration.workspace`, ...). */
export function presentWorkspaceAccess(
  object: string,
  ownerWorkspaceId: string | undefined,
  access: WorkspaceAccess | undefined,
) {
  const effective = access ?? NO_WORKSPACE_ACCESS;
  const ids = ownerWorkspaceId ? [ownerWorkspaceId] : effective.workspaceIds;
  const data = ids.map((id) => ({ id, object, enabled: true }));
  return {
    object: "list",
    global_workspace_access: { enabled: !ownerWorkspaceId && effective.global },
    total: data.length,
    data,
    workspaces: data,
  };
}
