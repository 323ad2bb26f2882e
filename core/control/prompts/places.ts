import type { Principal } from "../../auth/principal.ts";
import { workspaceScope } from "../../auth/scopes.ts";
import type { Records } from "../../store/ports.ts";
import type { ControlDeps } from "../deps.ts";
import { Forbidden, Invalid, NotFound } from "../errors.ts";
import { type CollectionResource, type Shareable, collectionStore } from "./store.ts";
import { boundWorkspace } from "../credentials/credentials.ts";
import type { Resource, ResourceStore } from "../resource-store.ts";
import { workspaceStore } from "../workspaces/store.ts";

/**
 * Where saved prompts, partials and collections live, and who reaches them (shared by the prompt services):
 * each belongs to one workspace. Workspace-bound callers reach their own workspace's, and read (never change)
 * those shared with their workspace; organisation-wide callers reach all. Another workspace's answers 404
 * like an unknown one.
 */

export const actorOf = (principal: Principal) => principal.userId ?? principal.keyId;

/** The workspace id a reference (id or slug) names, within the caller's reach; Invalid naming `param` when none. */
export async function workspaceIdOf(
  records: Records,
  principal: Principal,
  reference: string,
  param = "workspace_id",
): Promise<string> {
  const workspace = await workspaceStore(records).get(principal.organisationId, reference);
  if (!workspace) throw new Invalid(`No workspace '${reference}'.`, { param, code: "workspace_not_found" });
  workspaceScope(principal, workspace.id);
  return workspace.id;
}

/** A collection of the caller's reach, by id or slug; Invalid naming `param` when there is none. */
export async function collectionOf(
  records: Records,
  principal: Principal,
  reference: string,
  param = "collection_id",
): Promise<CollectionResource> {
  const collection = await collectionStore(records).get(principal.organisationId, reference);
  const bound = boundWorkspace(principal);
  if (!collection || (bound && collection.workspaceId !== bound))
    throw new Invalid(`No collection '${reference}'.`, { param, code: "collection_not_found" });
  return collection;
}

/**
 * Where a new prompt or partial goes: `workspace_id` when sent, else the collection's workspace, else the
 * caller's own workspace. A collection must be in that same workspace.
 */
export async function placeOf(
  deps: ControlDeps,
  principal: Principal,
  input: { workspace_id?: string; collection_id?: string },
): Promise<{ workspaceId: string; collectionId?: string }> {
  const collection = input.collection_id ? await collectionOf(deps.records, principal, input.collection_id) : undefined;
  let workspaceId: string | undefined;
  if (input.workspace_id) workspaceId = await workspaceIdOf(deps.records, principal, input.workspace_id);
  else workspaceId = collection?.workspaceId ?? boundWorkspace(principal) ?? principal.workspaceId;
  if (!workspaceId)
    throw new Invalid("Name the workspace ('workspace_id') or a collection ('collection_id') it goes in.", {
      param: "workspace_id",
      code: "workspace_required",
    });
  if (collection && collection.workspaceId !== workspaceId)
    throw new Invalid(`Collection '${input.collection_id}' is in another workspace.`, {
      param: "collection_id",
      code: "collection_in_other_workspace",
    });
  return { workspaceId, collectionId: collection?.id };
}

/**
 * The resource if the caller reaches it: its own workspace's, or one shared with its workspace (which it may
 * read and fork; every change then answers 403 through assertOwnWorkspace rather than pretending it does not
 * exist). NotFound otherwise.
 */
export async function loadReachable<T extends Shareable>(
  store: ResourceStore<T>,
  principal: Principal,
  idOrSlug: string,
  options: { what: string; code: string },
): Promise<T> {
  const resource = await store.get(principal.organisationId, idOrSlug);
  if (resource && reaches(principal, resource)) return resource;
  throw new NotFound(`No ${options.what} '${idOrSlug}'.`, { code: options.code });
}

/** Organisation-wide callers reach every resource; workspace-bound ones their own and those shared with them. */
export function reaches(principal: Principal, resource: Shareable): boolean {
  const bound = boundWorkspace(principal);
  if (!bound || resource.workspaceId === bound) return true;
  return resource.sharedWith?.includes(bound) === true;
}

/** A workspace-bound caller changes only its own workspace's resources (a shared one it may only read). */
export function assertOwnWorkspace(principal: Principal, resource: Resource, what: string): void {
  const bound = boundWorkspace(principal);
  if (bound && resource.workspaceId !== bound)
    throw new Forbidden(`This key cannot modify ${what} outside its workspace.`, { code: "workspace_forbidden" });
}

/** Deletes every record of a partition under `prefix` (a prompt's or partial's versions). */
export async function deletePartition(records: Records, partition: string, prefix: string): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition, prefix, limit: 100, cursor });
    for (const item of page.items) await records.delete(item.pk, item.sk);
    cursor = page.cursor;
  } while (cursor);
}
