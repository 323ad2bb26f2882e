import type { Principal } from "../../auth/principal.ts";
import { requireOrganisationAdmin } from "../../control/access.ts";
import type { ControlDeps } from "../../control/deps.ts";
import { workspaceStore } from "../../control/workspaces/store.ts";
import { presentMapping } from "./mappings.ts";
import { listAll, mappingMatches, scimGroupStore, scimMappingStore } from "./records.ts";

/**
 * Spec 4.8's admin views of SCIM: workspaces with the groups mapped to them, and groups found by name, both
 * paged by `page` (from 0) and `page_size`, answering `total_count`.
 */

export interface PageQuery {
  page: number;
  pageSize: number;
}

function paged<T>(items: T[], query: PageQuery) {
  const start = query.page * query.pageSize;
  return {
    object: "list",
    data: items.slice(start, start + query.pageSize),
    total_count: items.length,
    page: query.page,
    page_size: query.pageSize,
  };
}

export async function scimWorkspaces(deps: ControlDeps, principal: Principal, query: PageQuery) {
  requireOrganisationAdmin(principal);
  const workspaces = await listAll(workspaceStore(deps.records), principal.organisationId);
  const mappings = await listAll(scimMappingStore(deps.records), principal.organisationId);
  return paged(
    workspaces.map((workspace) => ({
      id: workspace.id,
      slug: workspace.slug,
      name: workspace.name,
      groups: mappings
        .filter((mapping) => mapping.workspace_id === workspace.id)
        .map((mapping) => ({
          mapping_id: mapping.id,
          group_id: mapping.group_id ?? null,
          display_name: mapping.group_display_name,
          role: mapping.role,
        })),
    })),
    query,
  );
}

export async function scimGroupsSearch(
  deps: ControlDeps,
  principal: Principal,
  query: PageQuery & { search?: string },
) {
  requireOrganisationAdmin(principal);
  const search = query.search?.trim().toLowerCase();
  const groups = await listAll(
    scimGroupStore(deps.records),
    principal.organisationId,
    (group) => !search || group.slug.includes(search),
  );
  const mappings = await listAll(scimMappingStore(deps.records), principal.organisationId);
  return paged(
    groups.map((group) => ({
      id: group.id,
      display_name: group.displayName,
      external_id: group.externalId ?? null,
      members_count: group.members.length,
      mappings: mappings.filter((mapping) => mappingMatches(mapping, group)).map(presentMapping),
    })),
    query,
  );
}
