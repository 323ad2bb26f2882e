import type { Principal } from "../../auth/principal.ts";

/**
 * Who a stored response belongs to: an organisation and one of its workspaces. A principal without a workspace
 * (an organisation admin key) owns the responses it creates itself under the empty workspace, as its cache
 * entries are scoped (core/inference/cache/cache-key.ts cacheScopeOf); it does not reach the workspaces' responses.
 */
export interface ResponseOwner {
  organisationId: string;
  /** `""` (or absent) for a principal without a workspace. */
  workspaceId?: string;
}

/** The owner every responses route (create, read, list, delete, cancel) stores and looks up by. */
export function responseOwnerOf(principal: Pick<Principal, "organisationId" | "workspaceId">): ResponseOwner {
  return { organisationId: principal.organisationId, workspaceId: principal.workspaceId ?? "" };
}

/** The owner's workspace as stored: never undefined, so that "no workspace" compares equal however it was given. */
export const workspaceOf = (owner: ResponseOwner): string => owner.workspaceId ?? "";
