import type { Principal } from "../../auth/principal.ts";
import { type ControlDeps, changed } from "../deps.ts";
import { Conflict, Invalid, NotFound } from "../errors.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import { type CountedPage, offsetPage } from "../paging.ts";
import { actorOf, assertOwnWorkspace, collectionOf, placeOf, workspaceIdOf } from "./places.ts";
import { type CollectionResource, collectionStore, partialStore, promptStore } from "./store.ts";
import type { CollectionCreateInput, CollectionUpdateInput } from "./schemas.ts";
import { boundWorkspace, isoTime, slugFrom } from "../credentials/credentials.ts";

/**
 * Prompt collections (`/v1/collections`, Portkey's /collections): folders of one workspace's prompts and
 * partials, nested through `parent_collection_id` (a parent in the same workspace, never a cycle). A collection
 * that still holds prompts, partials or collections cannot be deleted (409).
 */

/** Deeper nesting than this is refused: it keeps the ancestry walk short and no UI shows more. */
const MAX_DEPTH = 20;

export function presentCollection(collection: CollectionResource) {
  return {
    id: collection.id,
    object: "collection",
    name: collection.name,
    slug: collection.slug ?? null,
    organisation_id: collection.organisationId,
    workspace_id: collection.workspaceId ?? null,
    parent_collection_id: collection.parentCollectionId ?? null,
    created_by: collection.createdBy ?? null,
    created_at: isoTime(collection.createdAt),
    last_updated_at: isoTime(collection.updatedAt),
  };
}

async function load(deps: ControlDeps, principal: Principal, idOrSlug: string): Promise<CollectionResource> {
  const collection = await collectionStore(deps.records).get(principal.organisationId, idOrSlug);
  const bound = boundWorkspace(principal);
  if (!collection || (bound && collection.workspaceId !== bound))
    throw new NotFound(`No collection '${idOrSlug}'.`, { code: "collection_not_found" });
  return collection;
}

/** The parent a collection may have: same workspace, not itself nor one of its descendants, not too deep. */
async function checkedParent(
  deps: ControlDeps,
  principal: Principal,
  reference: string,
  workspaceId: string,
  child?: CollectionResource,
): Promise<CollectionResource> {
  const param = "parent_collection_id";
  const parent = await collectionOf(deps.records, principal, reference, param);
  if (parent.workspaceId !== workspaceId)
    throw new Invalid(`Collection '${reference}' is in another workspace.`, {
      param,
      code: "collection_in_other_workspace",
    });
  let ancestor: CollectionResource | undefined = parent;
  for (let depth = 1; ancestor; depth++) {
    if (child && ancestor.id === child.id)
      throw new Invalid("A collection cannot be inside itself.", { param, code: "collection_cycle" });
    if (depth >= MAX_DEPTH)
      throw new Invalid(`Collections nest at most ${MAX_DEPTH} deep.`, { param, code: "collection_too_deep" });
    ancestor = ancestor.parentCollectionId
      ? await collectionStore(deps.records).get(principal.organisationId, ancestor.parentCollectionId)
      : undefined;
  }
  return parent;
}

export async function createCollection(deps: ControlDeps, principal: Principal, input: CollectionCreateInput) {
  const parent = input.parent_collection_id
    ? await collectionOf(deps.records, principal, input.parent_collection_id, "parent_collection_id")
    : undefined;
  const { workspaceId } = await placeOf(deps, principal, { workspace_id: input.workspace_id ?? parent?.workspaceId });
  if (parent) await checkedParent(deps, principal, parent.id, workspaceId);
  const created = await collectionStore(deps.records).create(principal.organisationId, {
    name: input.name,
    slug: input.slug ?? slugFrom(input.name),
    workspaceId,
    parentCollectionId: parent?.id,
    createdBy: actorOf(principal),
  });
  await changed(deps, principal, { action: "create", resourceType: "collection", after: created }, presentCollection);
  return presentCollection(created);
}

export interface CollectionListQuery {
  limit: number;
  offset: number;
  workspace_id?: string;
  parent_collection_id?: string;
  search?: string;
}

export async function listCollections(
  deps: ControlDeps,
  principal: Principal,
  query: CollectionListQuery,
): Promise<CountedPage<ReturnType<typeof presentCollection>>> {
  const workspaceId = query.workspace_id
    ? await workspaceIdOf(deps.records, principal, query.workspace_id)
    : boundWorkspace(principal);
  const parentId = query.parent_collection_id
    ? (await collectionOf(deps.records, principal, query.parent_collection_id, "parent_collection_id")).id
    : undefined;
  const needle = query.search?.toLowerCase();
  const all = await collectionStore(deps.records).listAll(principal.organisationId, (collection) => {
    if (workspaceId && collection.workspaceId !== workspaceId) return false;
    if (parentId && collection.parentCollectionId !== parentId) return false;
    return !needle || collection.name.toLowerCase().includes(needle);
  });
  const page = offsetPage(all, query.offset, query.limit);
  return { ...page, items: page.items.map(presentCollection) };
}

export async function getCollection(deps: ControlDeps, principal: Principal, input: { collection: string }) {
  return presentCollection(await load(deps, principal, input.collection));
}

export async function updateCollection(
  deps: ControlDeps,
  principal: Principal,
  input: { collection: string; changes: Lazy<CollectionUpdateInput> },
) {
  const current = await load(deps, principal, input.collection);
  assertOwnWorkspace(principal, current, "collections");
  const body = await resolveLazy(input.changes);
  const changes: Partial<CollectionResource> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.parent_collection_id === null) changes.parentCollectionId = undefined;
  else if (body.parent_collection_id !== undefined)
    changes.parentCollectionId = (
      await checkedParent(deps, principal, body.parent_collection_id, current.workspaceId!, current)
    ).id;
  const updated = await collectionStore(deps.records).update(current, changes);
  await changed(
    deps,
    principal,
    { action: "update", resourceType: "collection", before: current, after: updated },
    presentCollection,
  );
  return presentCollection(updated);
}

/** Refused (409) while it holds collections, prompts or partials. */
export async function deleteCollection(deps: ControlDeps, principal: Principal, input: { collection: string }) {
  const collection = await load(deps, principal, input.collection);
  assertOwnWorkspace(principal, collection, "collections");
  const organisationId = principal.organisationId;
  const holds = async () =>
    (await collectionStore(deps.records).listAll(organisationId, (c) => c.parentCollectionId === collection.id))
      .length > 0 ||
    (await promptStore(deps.records).listAll(organisationId, (p) => p.collectionId === collection.id)).length > 0 ||
    (await partialStore(deps.records).listAll(organisationId, (p) => p.collectionId === collection.id)).length > 0;
  if (await holds())
    throw new Conflict(
      `Collection '${collection.slug ?? collection.id}' is not empty; move or delete its prompts, partials and collections first.`,
      { param: "id", code: "collection_not_empty" },
    );
  await collectionStore(deps.records).delete(collection);
  await changed(
    deps,
    principal,
    { action: "delete", resourceType: "collection", before: collection },
    presentCollection,
  );
  return { id: collection.id };
}
