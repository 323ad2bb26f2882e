import type { Principal } from "../../auth/principal.ts";
import { type ControlDeps, audit } from "../deps.ts";
import { Invalid } from "../errors.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import { actorOf, assertOwnWorkspace, loadReachable } from "./places.ts";
import type { Shareable } from "./store.ts";
import { partialStore, promptStore, readPartialVersion, readPromptVersion } from "./store.ts";
import { createPartial, presentPartial } from "./partials.ts";
import type { ForkInput } from "./schemas.ts";
import { createPrompt, presentPrompt } from "./service.ts";
import type { ResourceStore } from "../resource-store.ts";
import { workspaceStore } from "../workspaces/store.ts";

/**
 * Sharing prompts and partials across the workspaces of an organisation (spec 4.8: `/v2/prompts/:id/share`,
 * `/unshare`, `/fork`, and `/v2/prompts/partials/:id/...`). The owner's workspace keeps the resource; the
 * workspaces it is shared with may read and use it (core/control/prompts/access.ts) but not change it, and may
 * fork it: a copy in their own workspace whose version 1 is the source's published version. A prompt or partial
 * carries `sharedWith` (workspace ids) and `shared` (not empty), which also blocks deleting its workspace
 * (core/control/workspaces/store.ts, spec 7).
 */

type Kind = "prompt" | "partial";

const storeOf = (deps: ControlDeps, kind: Kind) =>
  (kind === "prompt" ? promptStore(deps.records) : partialStore(deps.records)) as unknown as ResourceStore<Shareable>;

const load = (deps: ControlDeps, principal: Principal, kind: Kind, idOrSlug: string) =>
  loadReachable(storeOf(deps, kind), principal, idOrSlug, { what: kind, code: `${kind}_not_found` });

function present(kind: Kind, resource: Shareable) {
  return kind === "prompt"
    ? presentPrompt(resource as Parameters<typeof presentPrompt>[0], { showShare: true })
    : presentPartial(resource as Parameters<typeof presentPartial>[0], { showShare: true });
}

/** The ids of the workspaces named (ids or slugs), all of this organisation; Invalid naming the unknown one. */
async function workspaceIds(deps: ControlDeps, principal: Principal, references: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const [index, reference] of references.entries()) {
    const workspace = await workspaceStore(deps.records).get(principal.organisationId, reference);
    if (!workspace)
      throw new Invalid(`No workspace '${reference}'.`, {
        param: `workspace_ids[${index}]`,
        code: "workspace_not_found",
      });
    ids.push(workspace.id);
  }
  return ids;
}

async function setSharing(
  deps: ControlDeps,
  principal: Principal,
  kind: Kind,
  current: Shareable,
  sharedWith: string[],
  action: string,
) {
  const updated = await storeOf(deps, kind).update(current, {
    sharedWith,
    shared: sharedWith.length > 0,
    updatedBy: actorOf(principal),
  });
  await audit(deps, principal, {
    action,
    resourceType: kind === "prompt" ? "prompt" : "prompt_partial",
    resourceId: updated.id,
    workspaceId: updated.workspaceId,
    before: present(kind, current),
    after: present(kind, updated),
  });
  return present(kind, updated);
}

export interface ShareTarget {
  kind: Kind;
  /** Id or slug. */
  id: string;
}

/** Adds workspaces to those the prompt or partial is shared with (its own workspace is refused). */
export async function share(
  deps: ControlDeps,
  principal: Principal,
  input: ShareTarget & { body: Lazy<{ workspace_ids: string[] }> },
) {
  const current = await load(deps, principal, input.kind, input.id);
  assertOwnWorkspace(principal, current, `${input.kind}s`);
  const { workspace_ids } = await resolveLazy(input.body);
  const ids = await workspaceIds(deps, principal, workspace_ids);
  const own = ids.indexOf(current.workspaceId!);
  if (own >= 0)
    throw new Invalid(`The ${input.kind} already belongs to workspace '${workspace_ids[own]}'.`, {
      param: `workspace_ids[${own}]`,
      code: "share_with_owner",
    });
  const sharedWith = [...new Set([...(current.sharedWith ?? []), ...ids])];
  return setSharing(deps, principal, input.kind, current, sharedWith, "share");
}

/** Stops sharing with the workspaces named, or with all of them. */
export async function unshare(
  deps: ControlDeps,
  principal: Principal,
  input: ShareTarget & { body: Lazy<{ workspace_ids?: string[] }> },
) {
  const current = await load(deps, principal, input.kind, input.id);
  assertOwnWorkspace(principal, current, `${input.kind}s`);
  const { workspace_ids } = await resolveLazy(input.body);
  const removed = workspace_ids ? new Set(await workspaceIds(deps, principal, workspace_ids)) : undefined;
  const sharedWith = removed ? (current.sharedWith ?? []).filter((id) => !removed.has(id)) : [];
  return setSharing(deps, principal, input.kind, current, sharedWith, "unshare");
}

/**
 * Copies a prompt or partial the caller may read (its own workspace's, or one shared with it) into the caller's
 * workspace (or `workspace_id`), as a new one whose version 1 is the source's published version.
 */
export async function fork(deps: ControlDeps, principal: Principal, input: ShareTarget & { body: Lazy<ForkInput> }) {
  const source = await load(deps, principal, input.kind, input.id);
  const body = await resolveLazy(input.body);
  const published = source.defaultVersion as number;
  const name = body.name ?? `${source.name as string} (fork)`;
  const place = { workspace_id: body.workspace_id, collection_id: body.collection_id, slug: body.slug, name };
  if (input.kind === "prompt") {
    const version = await readPromptVersion(deps.records, source.id, published);
    if (!version) throw new Invalid(`Prompt '${input.id}' has no published version to fork.`, { param: "id" });
    const { pk, sk, promptId, organisationId, version: _, createdAt, createdBy, ...content } = version;
    return createPrompt(deps, principal, { ...content, ...place, version_description: `Forked from ${source.id}` });
  }
  const version = await readPartialVersion(deps.records, source.id, published);
  if (!version) throw new Invalid(`Partial '${input.id}' has no published version to fork.`, { param: "id" });
  return createPartial(deps, principal, {
    ...place,
    string: version.string,
    version_description: `Forked from ${source.id}`,
  });
}
