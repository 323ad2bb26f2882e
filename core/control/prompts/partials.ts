import type { Principal } from "../../auth/principal.ts";
import { newId } from "../../util/ids.ts";
import type { Records } from "../../store/ports.ts";
import { type ControlDeps, audit } from "../deps.ts";
import { Conflict } from "../errors.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import { type CountedPage, offsetPage } from "../paging.ts";
import {
  type Shareable,
  actorOf,
  assertOwnWorkspace,
  deletePartition,
  listWhole,
  loadReachable,
  placeOf,
} from "./places.ts";
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
import { allVersions, versionOrNotFound, writeVersionOnce } from "./versions.ts";
import type { PartialCreateInput, PartialUpdateInput } from "./schemas.ts";
import { isoTime, slugFrom } from "../credentials/credentials.ts";
import { listScope } from "./service.ts";

/**
 * Prompt partials (`/v1/prompts/partials`, Portkey's /prompts/partials): reusable template fragments that
 * templates include as `{{> slug}}`, with versions like prompts (create writes version 1 and publishes it; a
 * content update writes n+1, published by `makeDefault`). A partial that a prompt's published or labelled
 * version includes cannot be deleted (409 naming the prompt).
 */

type Partial_ = PartialResource & Shareable;

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

async function writeVersion(
  records: Records,
  principal: Principal,
  partial: { id: string; organisationId: string },
  version: number,
  content: { string: string; version_description?: string },
): Promise<PartialVersionRecord> {
  return writeVersionOnce<PartialVersionRecord>(records, "partial", {
    ...partialVersionKey(partial.id, version),
    partialId: partial.id,
    organisationId: partial.organisationId,
    version,
    string: content.string,
    version_description: content.version_description,
    createdAt: Math.floor(Date.now() / 1000),
    createdBy: actorOf(principal),
  });
}

const versionOf = (records: Records, partial: Partial_, version: number) =>
  versionOrNotFound(readPartialVersion(records, partial.id, version), "partial", partial, version);

const load = (deps: ControlDeps, principal: Principal, idOrSlug: string) =>
  loadReachable<Partial_>(partialStore(deps.records), principal, idOrSlug, {
    what: "partial",
    code: "partial_not_found",
  });

async function changed(deps: ControlDeps, principal: Principal, action: string, before?: Partial_, after?: Partial_) {
  const subject = (after ?? before)!;
  await audit(deps, principal, {
    action,
    resourceType: "prompt_partial",
    resourceId: subject.id,
    workspaceId: subject.workspaceId,
    before: before && presentPartial(before, { showShare: true }),
    after: after && presentPartial(after, { showShare: true }),
  });
}

export async function createPartial(deps: ControlDeps, principal: Principal, input: PartialCreateInput) {
  checkTemplate(input.string);
  const place = await placeOf(deps, principal, input);
  const id = newId("ppp");
  const version = await writeVersion(
    deps.records,
    principal,
    { id, organisationId: principal.organisationId },
    1,
    input,
  );
  const created = (await partialStore(deps.records).create(
    principal.organisationId,
    {
      name: input.name,
      slug: input.slug ?? slugFrom(input.name),
      workspaceId: place.workspaceId,
      collectionId: place.collectionId,
      status: "active",
      latestVersion: 1,
      defaultVersion: 1,
      createdBy: actorOf(principal),
    },
    { id },
  )) as Partial_;
  await changed(deps, principal, "create", undefined, created);
  return presentWithVersion(created, version);
}

export interface PartialListQuery {
  limit: number;
  offset: number;
  workspace_id?: string;
  collection_id?: string;
  search?: string;
  type?: "shared";
  show_prompt_share?: boolean;
}

export async function listPartials(
  deps: ControlDeps,
  principal: Principal,
  query: PartialListQuery,
): Promise<CountedPage<ReturnType<typeof presentPartial>>> {
  const { workspaceIdFilter, collectionId } = await listScope(deps, principal, query);
  const needle = query.search?.toLowerCase();
  const all = await listWhole<Partial_>(partialStore(deps.records), principal.organisationId, (partial) => {
    if (query.type === "shared") {
      if (!workspaceIdFilter || !partial.sharedWith?.includes(workspaceIdFilter)) return false;
    } else if (workspaceIdFilter && partial.workspaceId !== workspaceIdFilter) return false;
    if (collectionId && partial.collectionId !== collectionId) return false;
    return !needle || `${partial.name} ${partial.slug ?? ""}`.toLowerCase().includes(needle);
  });
  const page = offsetPage(all, query.offset, query.limit);
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
  const partial = await load(deps, principal, input.partial);
  const number = (await resolveLazy(input.version)) ?? partial.defaultVersion;
  return presentWithVersion(partial, await versionOf(deps.records, partial, number));
}

export async function updatePartial(
  deps: ControlDeps,
  principal: Principal,
  input: PartialTarget & { changes: Lazy<PartialUpdateInput> },
) {
  const current = await load(deps, principal, input.partial);
  assertOwnWorkspace(principal, current, "partials");
  const body = await resolveLazy(input.changes);
  if (body.string !== undefined) checkTemplate(body.string);
  const changes: Partial<Partial_> = { updatedBy: actorOf(principal) };
  if (body.name !== undefined) changes.name = body.name;
  if (body.status !== undefined) changes.status = body.status;
  let version: PartialVersionRecord | undefined;
  if (body.string !== undefined) {
    version = await writeVersion(deps.records, principal, current, current.latestVersion + 1, {
      string: body.string,
      version_description: body.version_description ?? body.description,
    });
    changes.latestVersion = version.version;
  }
  const updated = (await partialStore(deps.records).update(current, changes)) as Partial_;
  await changed(deps, principal, "update", current, updated);
  return presentWithVersion(updated, version ?? (await versionOf(deps.records, updated, updated.defaultVersion)));
}

export async function publishPartial(
  deps: ControlDeps,
  principal: Principal,
  input: PartialTarget & { version: Lazy<number> },
) {
  const current = await load(deps, principal, input.partial);
  assertOwnWorkspace(principal, current, "partials");
  const number = await resolveLazy(input.version);
  await versionOf(deps.records, current, number);
  const updated = (await partialStore(deps.records).update(current, {
    defaultVersion: number,
    updatedBy: actorOf(principal),
  })) as Partial_;
  await changed(deps, principal, "publish", current, updated);
  return presentPartial(updated);
}

export async function listPartialVersions(
  deps: ControlDeps,
  principal: Principal,
  input: PartialTarget & { limit: number; offset: number },
) {
  const partial = await load(deps, principal, input.partial);
  const versions = await allVersions<PartialVersionRecord>(deps.records, partialVersionKey(partial.id, 1).pk);
  const page = offsetPage(versions, input.offset, input.limit);
  return { ...page, items: page.items.map((version) => presentPartialVersion(partial, version)) };
}

/**
 * The first prompt of the organisation whose published or labelled version includes `{{> slug}}`: those are
 * the versions calls use, and they would fail without the partial.
 */
async function promptIncluding(records: Records, partial: Partial_) {
  if (!partial.slug) return undefined;
  const prompts = await listWhole(promptStore(records), partial.organisationId, () => true);
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
  const partial = await load(deps, principal, input.partial);
  assertOwnWorkspace(principal, partial, "partials");
  const user = await promptIncluding(deps.records, partial);
  if (user)
    throw new Conflict(
      `Partial '${partial.slug}' is included by version ${user.version} of prompt '${user.prompt.slug ?? user.prompt.id}'; change that prompt first.`,
      { param: "id", code: "partial_in_use" },
    );
  await partialStore(deps.records).delete(partial);
  await deletePartition(deps.records, partialVersionKey(partial.id, 1).pk, "VERSION#");
  await changed(deps, principal, "delete", partial);
  return { id: partial.id };
}
