import type { Principal } from "../../auth/principal.ts";
import type { Records } from "../../store/ports.ts";
import { isoTime } from "../credentials/credentials.ts";
import type { ControlDeps } from "../deps.ts";
import { Conflict } from "../errors.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import type { CountedPage } from "../paging.ts";
import { actorOf } from "./places.ts";
import type { PartialCreateInput, PartialUpdateInput } from "./schemas.ts";
import {
  type PartialResource,
  type PartialVersionRecord,
  partialStore,
  partialVersionKey,
  promptStore,
  readPartialVersion,
  readPromptVersion,
} from "./store.ts";
import { checkTemplate, partialsIncluded } from "./templates.ts";
import { VersionedResources, type VersionedListQuery } from "./versioned.ts";

/**
 * Prompt partials (`/v1/prompts/partials`, Portkey's /prompts/partials): reusable template fragments that
 * templates include as `{{> slug}}`, with versions like prompts (create writes version 1 and publishes it; a
 * content update writes n+1, published by `makeDefault`). A partial that a prompt's published or labelled
 * version includes cannot be deleted (409 naming the prompt).
 */

type Partial_ = PartialResource;

export function presentPartial(partial: Partial_, options: { showShare?: boolean } = {}) {
  return {
    id: partial.id,
    object: "prompt_partial",
    slug: partial.slug ?? null,
    name: partial.name,
    organisation_id: partial.organisationId,
    workspace_id: partial.workspaceId ?? null,
    collection_id: partial.collectionId ?? null,
    status: partial.status,
    latest_version: partial.latestVersion,
    default_version: partial.defaultVersion,
    ...(options.showShare ? { shared_with: partial.sharedWith ?? [] } : {}),
    created_by: partial.createdBy ?? null,
    updated_by: partial.updatedBy ?? null,
    created_at: isoTime(partial.createdAt),
    last_updated_at: isoTime(partial.updatedAt),
  };
}

function presentPartialVersion(partial: Partial_, version: PartialVersionRecord) {
  return {
    id: String(version.version),
    object: "prompt_partial.version",
    prompt_partial_id: partial.id,
    version: version.version,
    prompt_partial_version: version.version,
    version_id: String(version.version),
    is_default: version.version === partial.defaultVersion,
    string: version.string,
    version_description: version.version_description ?? null,
    created_by: version.createdBy ?? null,
    created_at: isoTime(version.createdAt),
  };
}

const presentWithVersion = (partial: Partial_, version: PartialVersionRecord) => ({
  ...presentPartial(partial),
  string: version.string,
  version_description: version.version_description ?? null,
  prompt_partial_version: version.version,
  version_id: String(version.version),
});

/** What a partial's version holds. */
type PartialContent = { string: string; version_description?: string };

/** Partials as versioned resources (core/control/prompts/versioned.ts): their record and version shapes. */
const partials = new VersionedResources<Partial_, PartialVersionRecord, PartialContent>({
  kind: "partial",
  plural: "partials",
  resourceType: "prompt_partial",
  notFoundCode: "partial_not_found",
  store: partialStore,
  versionRecord: (partial, version, content, stamp) => ({
    ...partialVersionKey(partial.id, version),
    partialId: partial.id,
    organisationId: partial.organisationId,
    version,
    string: content.string,
    version_description: content.version_description,
    ...stamp,
  }),
  versionPartition: (id) => partialVersionKey(id, 1).pk,
  readVersion: readPartialVersion,
  present: presentPartial,
});

export async function createPartial(deps: ControlDeps, principal: Principal, input: PartialCreateInput) {
  const { created, version } = await partials.create(deps, principal, input, input);
  return presentWithVersion(created, version);
}

export type PartialListQuery = VersionedListQuery;

export async function listPartials(
  deps: ControlDeps,
  principal: Principal,
  query: PartialListQuery,
): Promise<CountedPage<ReturnType<typeof presentPartial>>> {
  const page = await partials.list(deps, principal, query);
  return { ...page, items: page.items.map((item) => presentPartial(item, { showShare: query.show_prompt_share })) };
}

export interface PartialTarget {
  partial: string;
}

export async function getPartial(
  deps: ControlDeps,
  principal: Principal,
  input: PartialTarget & { version?: Lazy<number | undefined> },
) {
  const { resource, version } = await partials.get(deps, principal, input.partial, input.version);
  return presentWithVersion(resource, version);
}

export async function updatePartial(
  deps: ControlDeps,
  principal: Principal,
  input: PartialTarget & { changes: Lazy<PartialUpdateInput> },
) {
  const current = await partials.loadOwn(deps, principal, input.partial);
  const body = await resolveLazy(input.changes);
  if (body.string !== undefined) checkTemplate(body.string);
  const changes: Partial<Partial_> = { updatedBy: actorOf(principal) };
  if (body.name !== undefined) changes.name = body.name;
  if (body.status !== undefined) changes.status = body.status;
  let version: PartialVersionRecord | undefined;
  if (body.string !== undefined) {
    version = await partials.writeVersion(deps.records, principal, current, current.latestVersion + 1, {
      string: body.string,
      version_description: body.version_description ?? body.description,
    });
    changes.latestVersion = version.version;
  }
  const saved = await partials.update(deps, principal, current, changes, version);
  return presentWithVersion(saved.updated, saved.version);
}

export async function publishPartial(
  deps: ControlDeps,
  principal: Principal,
  input: PartialTarget & { version: Lazy<number> },
) {
  return presentPartial(await partials.publish(deps, principal, input.partial, input.version));
}

export async function listPartialVersions(
  deps: ControlDeps,
  principal: Principal,
  input: PartialTarget & { limit: number; offset: number },
) {
  const { resource, page } = await partials.versions(deps, principal, { idOrSlug: input.partial, ...input });
  return { ...page, items: page.items.map((version) => presentPartialVersion(resource, version)) };
}

/**
 * The first prompt of the organisation whose published or labelled version includes `{{> slug}}`: those are
 * the versions calls use, and they would fail without the partial.
 */
async function promptIncluding(records: Records, partial: Partial_) {
  if (!partial.slug) return undefined;
  const prompts = await promptStore(records).listAll(partial.organisationId, () => true);
  for (const prompt of prompts) {
    const used = new Set([prompt.defaultVersion, ...Object.values(prompt.labels)]);
    for (const number of used) {
      const version = await readPromptVersion(records, prompt.id, number);
      if (version && partialsIncluded(version.string).has(partial.slug)) return { prompt, version: number };
    }
  }
  return undefined;
}

/** Refused (409 naming the prompt) while a prompt's published or labelled version includes it. */
export async function deletePartial(deps: ControlDeps, principal: Principal, input: PartialTarget) {
  const partial = await partials.loadOwn(deps, principal, input.partial);
  const user = await promptIncluding(deps.records, partial);
  if (user)
    throw new Conflict(
      `Partial '${partial.slug}' is included by version ${user.version} of prompt '${user.prompt.slug ?? user.prompt.id}'; change that prompt first.`,
      { param: "id", code: "partial_in_use" },
    );
  return partials.remove(deps, principal, partial);
}
