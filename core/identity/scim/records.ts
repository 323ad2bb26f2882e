import { type Resource, ResourceStore } from "../../control/resource-store.ts";
import type { WorkspaceRole } from "../../auth/principal.ts";
import type { Records } from "../../store/ports.ts";

/**
 * SCIM's own records (organisation-owned, core/control/resource-store.ts). Users are the gateway's users
 * (core/control/users/store.ts), which keep their SCIM attributes (`external_id`, `active`, `emails`,
 * `scim_workspaces`) on the user record.
 * - SCIM tokens (SCIMTOKEN, `scimtok_...`): only the sha256 of the secret, plus a lookup record
 *   pk `SCIMTOKENHASH#<sha256>` pointing at the token, deleted on revocation.
 * - Groups (SCIMGROUP, `grp_...`), slugged by lower-cased displayName so names are unique and found in one read.
 * - Group mappings (SCIMMAP, `scimmap_...`): a group (by id, or by displayName before the IdP pushed it) to a
 *   workspace and role.
 */

export interface ScimToken extends Resource {
  name: string;
  tokenHash: string;
  hint: string;
  status: "active" | "revoked";
  createdBy?: { keyId?: string; userId?: string };
  lastUsedAt?: number;
}

export interface ScimMember {
  value: string;
  display?: string;
}

export interface ScimGroup extends Resource {
  slug: string;
  displayName: string;
  externalId?: string | null;
  members: ScimMember[];
}

export interface ScimGroupMapping extends Resource {
  group_id?: string | null;
  group_display_name: string;
  workspace_id: string;
  role: WorkspaceRole;
}

export const scimTokenStore = (records: Records) => new ResourceStore<ScimToken>(records, "SCIMTOKEN", "scimtok");
export const scimGroupStore = (records: Records) => new ResourceStore<ScimGroup>(records, "SCIMGROUP", "grp");
export const scimMappingStore = (records: Records) =>
  new ResourceStore<ScimGroupMapping>(records, "SCIMMAP", "scimmap");

export const tokenLookupKey = (hash: string) => ({ pk: `SCIMTOKENHASH#${hash}`, sk: "SCIMTOKENHASH" });

export const groupSlug = (displayName: string) => displayName.trim().toLowerCase();

/**
 * Every resource of a kind in the organisation, oldest first (SCIM lists are filtered and paged in memory, and
 * startIndex paging needs a stable order as resources are added).
 */
export async function listAll<T extends Resource>(
  store: ResourceStore<T>,
  organisationId: string,
  filter?: (resource: T) => boolean,
): Promise<T[]> {
  return (await store.listAll(organisationId, filter)).reverse();
}

/** Whether a mapping names this group (by id, or by displayName when made before the group existed). */
export function mappingMatches(mapping: ScimGroupMapping, group: ScimGroup): boolean {
  if (mapping.group_id) return mapping.group_id === group.id;
  return groupSlug(mapping.group_display_name) === group.slug;
}
