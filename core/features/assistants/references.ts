import type { ResourceOwner } from "../../auth/resource-owner.ts";
import { HttpError } from "../../http/errors.ts";
import { isPlainObject } from "../../inference/routing/query.ts";
import type { AssistantObjectOwners } from "./object-owners.ts";
import { OWNED_PARAMS, type OwnedKind } from "./operations.ts";

const KIND_NAMES: Record<OwnedKind, string> = {
  assistant: "assistant",
  thread: "thread",
  message: "message",
  run: "run",
  vector_store: "vector store",
  file_batch: "vector store file batch",
};

interface Reference {
  id: string;
  kind: OwnedKind;
  /** Where the request names it: a path parameter or a body field. */
  param: string | null;
}

/**
 * Refuses (404, as the provider answers an unknown id) a request that names an object another workspace created
 * through the gateway: in its path (the thread of `/threads/{id}/runs`, ...) or its body (`assistant_id` of a
 * run, the vector stores of `tool_resources`, also inside `thread` of `/threads/runs`). Ids the gateway never
 * recorded pass: the provider decides.
 */
export async function refuseOthersObjects(
  owners: AssistantObjectOwners,
  owner: ResourceOwner,
  params: Record<string, string>,
  body: Record<string, unknown> | undefined,
): Promise<void> {
  const references = referencesOf(params, body);
  const refused = await Promise.all(references.map((reference) => owners.ownedByAnother(reference.id, owner)));
  const index = refused.indexOf(true);
  if (index === -1) return;
  const { id, kind, param } = references[index]!;
  throw new HttpError(404, `No ${KIND_NAMES[kind]} found with id '${id}'.`, {
    type: "invalid_request_error",
    param: param && !(param in OWNED_PARAMS) ? param : null,
  });
}

function referencesOf(params: Record<string, string>, body: Record<string, unknown> | undefined): Reference[] {
  const references: Reference[] = [];
  for (const [param, kind] of Object.entries(OWNED_PARAMS)) {
    const id = params[param];
    if (id) references.push({ id, kind, param });
  }
  if (!body) return references;
  if (typeof body.assistant_id === "string")
    references.push({ id: body.assistant_id, kind: "assistant", param: "assistant_id" });
  vectorStoresOf(body.tool_resources, "tool_resources", references);
  if (isPlainObject(body.thread)) vectorStoresOf(body.thread.tool_resources, "thread.tool_resources", references);
  return references;
}

function vectorStoresOf(resources: unknown, where: string, into: Reference[]): void {
  if (!isPlainObject(resources) || !isPlainObject(resources.file_search)) return;
  const ids = resources.file_search.vector_store_ids;
  if (!Array.isArray(ids)) return;
  ids.forEach((id, i) => {
    if (typeof id === "string")
      into.push({ id, kind: "vector_store", param: `${where}.file_search.vector_store_ids[${i}]` });
  });
}
