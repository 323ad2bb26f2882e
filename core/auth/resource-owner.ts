import type { Principal } from "./principal.ts";

/**
 * Who a data-plane resource (a stored response, a file, a batch, a fine-tuning job) belongs to: an organisation
 * and one of its workspaces. A principal without a workspace (an organisation admin key) owns what it creates
 * itself under the empty workspace, as its cache entries are scoped; it does not reach the workspaces' resources.
 * Every read and write of such a resource is keyed by its owner, so another workspace's caller gets a 404.
 */
export interface ResourceOwner {
  organisationId: string;
  /** `""` for a principal without a workspace. */
  workspaceId: string;
}

export function resourceOwnerOf(principal: Pick<Principal, "organisationId" | "workspaceId">): ResourceOwner {
  return { organisationId: principal.organisationId, workspaceId: principal.workspaceId ?? "" };
}

/** The partition-key fragment of an owner: `<org>#<workspace>`. */
export const ownerKey = (owner: ResourceOwner) => `${owner.organisationId}#${owner.workspaceId}`;
