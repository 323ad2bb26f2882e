import type { Principal } from "../../auth/principal.ts";
import { isoTime } from "../credentials/credentials.ts";
import type { ControlDeps } from "../deps.ts";
import { Invalid } from "../errors.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import type { CountedPage } from "../paging.ts";
import { findLabel } from "./labels.ts";
import { actorOf, collectionOf } from "./places.ts";
import type { PromptCreateInput, PromptUpdateInput } from "./schemas.ts";
import {
  type PromptResource,
  type PromptVersionContent,
  type PromptVersionRecord,
  promptStore,
  promptVersionKey,
  readPromptVersion,
} from "./store.ts";
import { checkTemplate } from "./templates.ts";
import { VersionedResources, type VersionedListQuery } from "./versioned.ts";

/**
 * Saved prompts (`/v1/prompts`, Portkey's /prompts) and their versions. A prompt belongs to one workspace
 * (core/control/prompts/places.ts); its content lives in immutable versions (core/control/prompts/store.ts):
 * creating writes version 1 and publishes it, every content update writes version n+1 (unpublished until
 * `makeDefault`), while a name or collection change writes none. Labels are movable pointers to versions. Every
 * change is audited.
 */

type Prompt = PromptResource;

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

// --- the service ---------------------------------------------------------------------------------------------

/** Saved prompts as versioned resources (core/control/prompts/versioned.ts): their record and version shapes. */
const prompts = new VersionedResources<Prompt, PromptVersionRecord, PromptVersionContent>({
  kind: "prompt",
  plural: "prompts",
  resourceType: "prompt",
  notFoundCode: "prompt_not_found",
  store: promptStore,
  versionRecord: (prompt, version, content, stamp) => ({
    ...contentOf(content),
    ...promptVersionKey(prompt.id, version),
    promptId: prompt.id,
    organisationId: prompt.organisationId,
    version,
    ...stamp,
  }),
  versionPartition: (id) => promptVersionKey(id, 1).pk,
  readVersion: readPromptVersion,
  present: presentPrompt,
});

export async function createPrompt(deps: ControlDeps, principal: Principal, input: PromptCreateInput) {
  const { created, version } = await prompts.create(deps, principal, input, input, { labels: {} });
  return presentPromptWithVersion(created, version);
}

export type PromptListQuery = VersionedListQuery;

/** Newest first, with the total: the caller's workspace's (or `workspace_id`'s), or those shared with it. */
export async function listPrompts(
  deps: ControlDeps,
  principal: Principal,
  query: PromptListQuery,
): Promise<CountedPage<ReturnType<typeof presentPrompt>>> {
  const page = await prompts.list(deps, principal, query);
  return { ...page, items: page.items.map((prompt) => presentPrompt(prompt, { showShare: query.show_prompt_share })) };
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
  const { resource, version } = await prompts.get(deps, principal, input.prompt, input.version);
  return presentPromptWithVersion(resource, version);
}

/** Content fields write version n+1 from the latest version plus the changes; name and collection do not. */
export async function updatePrompt(
  deps: ControlDeps,
  principal: Principal,
  input: PromptTarget & { changes: Lazy<PromptUpdateInput> },
) {
  const current = await prompts.loadOwn(deps, principal, input.prompt);
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
    const latest = await prompts.versionOf(deps.records, current, current.latestVersion);
    const content: PromptVersionContent = { ...contentOf(latest), version_description: undefined };
    for (const field of contentChanges) (content as unknown as Record<string, unknown>)[field] = body[field];
    version = await prompts.writeVersion(deps.records, principal, current, current.latestVersion + 1, content);
    changes.latestVersion = version.version;
  }
  const saved = await prompts.update(deps, principal, current, changes, version);
  return presentPromptWithVersion(saved.updated, saved.version);
}

/** The prompt and all its versions. A prompt still shared with other workspaces goes too (they lose it). */
export async function deletePrompt(deps: ControlDeps, principal: Principal, input: PromptTarget) {
  const prompt = await prompts.loadOwn(deps, principal, input.prompt);
  return prompts.remove(deps, principal, prompt);
}

/** `PUT /v1/prompts/:id/makeDefault`: publishes an existing version. */
export async function publishPrompt(
  deps: ControlDeps,
  principal: Principal,
  input: PromptTarget & { version: Lazy<number> },
) {
  return presentPrompt(await prompts.publish(deps, principal, input.prompt, input.version));
}

export async function listPromptVersions(
  deps: ControlDeps,
  principal: Principal,
  input: PromptTarget & { limit: number; offset: number },
) {
  const { resource, page } = await prompts.versions(deps, principal, { idOrSlug: input.prompt, ...input });
  return { ...page, items: page.items.map((version) => presentPromptVersion(resource, version)) };
}

export async function getPromptVersion(
  deps: ControlDeps,
  principal: Principal,
  input: PromptTarget & { version: number },
) {
  const prompt = await prompts.load(deps, principal, input.prompt);
  return presentPromptVersion(prompt, await prompts.versionOf(deps.records, prompt, input.version));
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
  const current = await prompts.loadOwn(deps, principal, input.prompt);
  await prompts.versionOf(deps.records, current, input.version);
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
  await prompts.audit(deps, principal, "label", current, updated);
  return presentPromptVersion(updated, await prompts.versionOf(deps.records, updated, input.version));
}
