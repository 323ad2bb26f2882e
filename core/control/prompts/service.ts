import type { Principal } from "../../auth/principal.ts";
import { newId } from "../../util/ids.ts";
import type { Records } from "../../store/ports.ts";
import { type ControlDeps, audit } from "../deps.ts";
import { Invalid } from "../errors.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import { type CountedPage, offsetPage } from "../paging.ts";
import { findLabel } from "./labels.ts";
import {
  type Shareable,
  actorOf,
  assertOwnWorkspace,
  collectionOf,
  deletePartition,
  listWhole,
  loadReachable,
  placeOf,
  workspaceIdOf,
} from "./places.ts";
import {
  type PromptResource,
  type PromptVersionContent,
  type PromptVersionRecord,
  promptStore,
  promptVersionKey,
  readPromptVersion,
} from "./store.ts";
import { checkTemplate } from "./templates.ts";
import { allVersions, versionOrNotFound, writeVersionOnce } from "./versions.ts";
import type { PromptCreateInput, PromptUpdateInput } from "./schemas.ts";
import { boundWorkspace, isoTime, slugFrom } from "../credentials/credentials.ts";

/**
 * Saved prompts (`/v1/prompts`, Portkey's /prompts) and their versions. A prompt belongs to one workspace
 * (core/control/prompts/places.ts); its content lives in immutable versions (core/control/prompts/store.ts):
 * creating writes version 1 and publishes it, every content update writes version n+1 (unpublished until
 * `makeDefault`), while a name or collection change writes none. Labels are movable pointers to versions. Every
 * change is audited.
 */

type Prompt = PromptResource & Shareable;

const CONTENT_FIELDS = [
  "string",
  "parameters",
  "model",
  "virtual_key",
  "functions",
  "tools",
  "tool_choice",
  "response_format",
  "template_metadata",
  "version_description",
] as const satisfies readonly (keyof PromptVersionContent)[];

export function presentPrompt(prompt: Prompt, options: { showShare?: boolean } = {}) {
  return {
    id: prompt.id,
    object: "prompt",
    slug: prompt.slug ?? null,
    name: prompt.name,
    organisation_id: prompt.organisationId,
    workspace_id: prompt.workspaceId ?? null,
    collection_id: prompt.collectionId ?? null,
    status: prompt.status,
    latest_version: prompt.latestVersion,
    default_version: prompt.defaultVersion,
    labels: Object.entries(prompt.labels).map(([labelId, version]) => ({ label_id: labelId, version })),
    ...(options.showShare ? { shared_with: prompt.sharedWith ?? [] } : {}),
    created_by: prompt.createdBy ?? null,
    updated_by: prompt.updatedBy ?? null,
    created_at: isoTime(prompt.createdAt),
    last_updated_at: isoTime(prompt.updatedAt),
  };
}

export function presentPromptVersion(prompt: Prompt, version: PromptVersionRecord) {
  return {
    id: String(version.version),
    object: "prompt.version",
    prompt_id: prompt.id,
    prompt_version: version.version,
    version_id: String(version.version),
    is_default: version.version === prompt.defaultVersion,
    label_ids: Object.entries(prompt.labels)
      .filter(([, pointed]) => pointed === version.version)
      .map(([labelId]) => labelId),
    ...contentOf(version),
    created_by: version.createdBy ?? null,
    created_at: isoTime(version.createdAt),
  };
}

/** A prompt with one version's content (the published one unless asked otherwise), as Portkey answers a read. */
function presentPromptWithVersion(prompt: Prompt, version: PromptVersionRecord) {
  return {
    ...presentPrompt(prompt),
    ...contentOf(version),
    prompt_version: version.version,
    prompt_version_id: String(version.version),
    version_id: String(version.version),
  };
}

function contentOf(version: PromptVersionContent): PromptVersionContent {
  const content: Record<string, unknown> = {};
  for (const field of CONTENT_FIELDS) if (version[field] !== undefined) content[field] = version[field];
  return content as unknown as PromptVersionContent;
}

// --- versions ------------------------------------------------------------------------------------------------

/** Writes a version once: a second writer of the same number (a concurrent update) gets Conflict. */
function writeVersion(
  records: Records,
  principal: Principal,
  prompt: { id: string; organisationId: string },
  version: number,
  content: PromptVersionContent,
): Promise<PromptVersionRecord> {
  return writeVersionOnce<PromptVersionRecord>(records, "prompt", {
    ...contentOf(content),
    ...promptVersionKey(prompt.id, version),
    promptId: prompt.id,
    organisationId: prompt.organisationId,
    version,
    createdAt: Math.floor(Date.now() / 1000),
    createdBy: actorOf(principal),
  });
}

export const versionOf = (records: Records, prompt: Prompt, version: number): Promise<PromptVersionRecord> =>
  versionOrNotFound(readPromptVersion(records, prompt.id, version), "prompt", prompt, version);

// --- the service ---------------------------------------------------------------------------------------------

const load = (deps: ControlDeps, principal: Principal, idOrSlug: string) =>
  loadReachable<Prompt>(promptStore(deps.records), principal, idOrSlug, {
    what: "prompt",
    code: "prompt_not_found",
  });

async function changed(deps: ControlDeps, principal: Principal, action: string, before?: Prompt, after?: Prompt) {
  const subject = (after ?? before)!;
  await audit(deps, principal, {
    action,
    resourceType: "prompt",
    resourceId: subject.id,
    workspaceId: subject.workspaceId,
    before: before && presentPrompt(before, { showShare: true }),
    after: after && presentPrompt(after, { showShare: true }),
  });
}

export async function createPrompt(deps: ControlDeps, principal: Principal, input: PromptCreateInput) {
  checkTemplate(input.string);
  const place = await placeOf(deps, principal, input);
  const id = newId("pp");
  // The version first: a prompt is never without its content, even if the create stops half-way.
  const version = await writeVersion(
    deps.records,
    principal,
    { id, organisationId: principal.organisationId },
    1,
    input,
  );
  const created = (await promptStore(deps.records).create(
    principal.organisationId,
    {
      name: input.name,
      slug: input.slug ?? slugFrom(input.name),
      workspaceId: place.workspaceId,
      collectionId: place.collectionId,
      status: "active",
      latestVersion: 1,
      defaultVersion: 1,
      labels: {},
      createdBy: actorOf(principal),
    },
    { id },
  )) as Prompt;
  await changed(deps, principal, "create", undefined, created);
  return presentPromptWithVersion(created, version);
}

export interface PromptListQuery {
  limit: number;
  offset: number;
  workspace_id?: string;
  collection_id?: string;
  search?: string;
  /** `shared`: the prompts other workspaces share with the caller's workspace (or `workspace_id`). */
  type?: "shared";
  show_prompt_share?: boolean;
}

/** Newest first, with the total: the caller's workspace's (or `workspace_id`'s), or those shared with it. */
export async function listPrompts(
  deps: ControlDeps,
  principal: Principal,
  query: PromptListQuery,
): Promise<CountedPage<ReturnType<typeof presentPrompt>>> {
  const { workspaceIdFilter, collectionId } = await listScope(deps, principal, query);
  const needle = query.search?.toLowerCase();
  const matches = (prompt: Prompt) => {
    if (query.type === "shared") {
      if (!workspaceIdFilter || !prompt.sharedWith?.includes(workspaceIdFilter)) return false;
    } else if (workspaceIdFilter && prompt.workspaceId !== workspaceIdFilter) return false;
    if (collectionId && prompt.collectionId !== collectionId) return false;
    if (needle && !`${prompt.name} ${prompt.slug ?? ""}`.toLowerCase().includes(needle)) return false;
    return true;
  };
  const all = await listWhole<Prompt>(promptStore(deps.records), principal.organisationId, matches);
  const page = offsetPage(all, query.offset, query.limit);
  return { ...page, items: page.items.map((prompt) => presentPrompt(prompt, { showShare: query.show_prompt_share })) };
}

/** The workspace a list is about (the caller's own for workspace-bound callers) and the collection it names. */
export async function listScope(
  deps: ControlDeps,
  principal: Principal,
  query: { workspace_id?: string; collection_id?: string; type?: "shared" },
): Promise<{ workspaceIdFilter?: string; collectionId?: string }> {
  const workspaceIdFilter = query.workspace_id
    ? await workspaceIdOf(deps.records, principal, query.workspace_id)
    : boundWorkspace(principal);
  if (query.type === "shared" && !workspaceIdFilter)
    throw new Invalid("'type=shared' lists what is shared with a workspace: name it ('workspace_id').", {
      param: "workspace_id",
      code: "workspace_required",
    });
  const collectionId = query.collection_id
    ? (await collectionOf(deps.records, principal, query.collection_id)).id
    : undefined;
  return { workspaceIdFilter, collectionId };
}

export interface PromptTarget {
  /** Id or slug. */
  prompt: string;
}

/** The prompt with its published version's content, or `version`'s. Shared prompts are readable. */
export async function getPrompt(
  deps: ControlDeps,
  principal: Principal,
  input: PromptTarget & { version?: Lazy<number | undefined> },
) {
  const prompt = await load(deps, principal, input.prompt);
  const number = (await resolveLazy(input.version)) ?? prompt.defaultVersion;
  return presentPromptWithVersion(prompt, await versionOf(deps.records, prompt, number));
}

/** Content fields write version n+1 from the latest version plus the changes; name and collection do not. */
export async function updatePrompt(
  deps: ControlDeps,
  principal: Principal,
  input: PromptTarget & { changes: Lazy<PromptUpdateInput> },
) {
  const current = await load(deps, principal, input.prompt);
  assertOwnWorkspace(principal, current, "prompts");
  const body = await resolveLazy(input.changes);
  if (body.string !== undefined) checkTemplate(body.string);
  const changes: Partial<Prompt> = { updatedBy: actorOf(principal) };
  if (body.name !== undefined) changes.name = body.name;
  if (body.collection_id !== undefined) {
    const collection = await collectionOf(deps.records, principal, body.collection_id);
    if (collection.workspaceId !== current.workspaceId)
      throw new Invalid(`Collection '${body.collection_id}' is in another workspace.`, {
        param: "collection_id",
        code: "collection_in_other_workspace",
      });
    changes.collectionId = collection.id;
  }
  const contentChanges = CONTENT_FIELDS.filter((field) => body[field] !== undefined);
  let version: PromptVersionRecord | undefined;
  if (contentChanges.length > 0) {
    const latest = await versionOf(deps.records, current, current.latestVersion);
    const content: PromptVersionContent = { ...contentOf(latest), version_description: undefined };
    for (const field of contentChanges) (content as unknown as Record<string, unknown>)[field] = body[field];
    version = await writeVersion(deps.records, principal, current, current.latestVersion + 1, content);
    changes.latestVersion = version.version;
  }
  const updated = (await promptStore(deps.records).update(current, changes)) as Prompt;
  await changed(deps, principal, "update", current, updated);
  return presentPromptWithVersion(updated, version ?? (await versionOf(deps.records, updated, updated.defaultVersion)));
}

/** The prompt and all its versions. A prompt still shared with other workspaces goes too (they lose it). */
export async function deletePrompt(deps: ControlDeps, principal: Principal, input: PromptTarget) {
  const prompt = await load(deps, principal, input.prompt);
  assertOwnWorkspace(principal, prompt, "prompts");
  await promptStore(deps.records).delete(prompt);
  await deletePartition(deps.records, promptVersionKey(prompt.id, 1).pk, "VERSION#");
  await changed(deps, principal, "delete", prompt);
  return { id: prompt.id };
}

/** `PUT /v1/prompts/:id/makeDefault`: publishes an existing version. */
export async function publishPrompt(
  deps: ControlDeps,
  principal: Principal,
  input: PromptTarget & { version: Lazy<number> },
) {
  const current = await load(deps, principal, input.prompt);
  assertOwnWorkspace(principal, current, "prompts");
  const number = await resolveLazy(input.version);
  await versionOf(deps.records, current, number);
  const updated = (await promptStore(deps.records).update(current, {
    defaultVersion: number,
    updatedBy: actorOf(principal),
  })) as Prompt;
  await changed(deps, principal, "publish", current, updated);
  return presentPrompt(updated);
}

export async function listPromptVersions(
  deps: ControlDeps,
  principal: Principal,
  input: PromptTarget & { limit: number; offset: number },
) {
  const prompt = await load(deps, principal, input.prompt);
  const versions = await allVersions<PromptVersionRecord>(deps.records, promptVersionKey(prompt.id, 1).pk);
  const page = offsetPage(versions, input.offset, input.limit);
  return { ...page, items: page.items.map((version) => presentPromptVersion(prompt, version)) };
}

export async function getPromptVersion(
  deps: ControlDeps,
  principal: Principal,
  input: PromptTarget & { version: number },
) {
  const prompt = await load(deps, principal, input.prompt);
  return presentPromptVersion(prompt, await versionOf(deps.records, prompt, input.version));
}

/**
 * `PUT /v1/prompts/:id/versions/:versionId` with `label_id`: moves that label's pointer to this version. The
 * label must be the organisation's or the prompt's workspace's.
 */
export async function labelPromptVersion(
  deps: ControlDeps,
  principal: Principal,
  input: PromptTarget & { version: number; labelId: Lazy<string> },
) {
  const current = await load(deps, principal, input.prompt);
  assertOwnWorkspace(principal, current, "prompts");
  await versionOf(deps.records, current, input.version);
  const reference = await resolveLazy(input.labelId);
  const label = await findLabel(deps.records, principal.organisationId, reference);
  if (!label || (label.workspaceId && label.workspaceId !== current.workspaceId))
    throw new Invalid(`No label '${reference}' usable in this prompt's workspace.`, {
      param: "label_id",
      code: "label_not_found",
    });
  const updated = (await promptStore(deps.records).update(current, {
    labels: { ...current.labels, [label.id]: input.version },
    updatedBy: actorOf(principal),
  })) as Prompt;
  await changed(deps, principal, "label", current, updated);
  return presentPromptVersion(updated, await versionOf(deps.records, updated, input.version));
}
