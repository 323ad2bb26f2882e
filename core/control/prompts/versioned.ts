import type { Principal } from "../../auth/principal.ts";
import { ConditionFailedError, type Records } from "../../store/ports.ts";
import { newId } from "../../util/ids.ts";
import { boundWorkspace, slugFrom } from "../credentials/credentials.ts";
import { type ControlDeps, changed } from "../deps.ts";
import { Conflict, Invalid, NotFound } from "../errors.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import { type CountedPage, offsetPage } from "../paging.ts";
import type { ResourceStore } from "../resource-store.ts";
import {
  actorOf,
  assertOwnWorkspace,
  collectionOf,
  deletePartition,
  loadReachable,
  placeOf,
  workspaceIdOf,
} from "./places.ts";
import type { Shareable } from "./store.ts";
import { checkTemplate } from "./templates.ts";

/**
 * Saved prompts and partials are one kind of resource: a named, placed, shareable record whose content lives in
 * immutable versions (core/control/prompts/store.ts). Creating writes version 1 and publishes it, a content
 * update writes version n+1 (published by `makeDefault`), every change is audited. This is that resource's one
 * implementation; service.ts (prompts) and partials.ts give it their record shapes and presentations.
 */

/** A prompt or a partial: what the versioned operations read and write of it. */
export interface Versioned extends Shareable {
  slug?: string;
  name: string;
  collectionId?: string;
  status: string;
  latestVersion: number;
  defaultVersion: number;
  createdBy?: string;
  updatedBy?: string;
}

/** A version record: its keys and number (and its content, creation time, author). */
export type VersionRecord = { pk: string; sk: string; version: number };

export interface VersionedKind<T extends Versioned, R extends VersionRecord, C> {
  /** In messages: `prompt`, `partial`. */
  kind: "prompt" | "partial";
  /** Where the caller's own workspace is required: `prompts`, `partials`. */
  plural: string;
  /** The audit entries' resource type. */
  resourceType: string;
  /** The answer of an unknown (or unreachable) one. */
  notFoundCode: string;
  store(records: Records): ResourceStore<T>;
  /** The version's record of `owner`, as written (keys, content, `stamp`). */
  versionRecord(
    owner: { id: string; organisationId: string },
    version: number,
    content: C,
    stamp: { createdAt: number; createdBy?: string },
  ): R;
  /** The partition holding `id`'s versions. */
  versionPartition(id: string): string;
  readVersion(records: Records, id: string, version: number): Promise<R | undefined>;
  /** The public view, with `shared_with` when `showShare` (the audit entries always show it). */
  present(resource: T, options?: { showShare?: boolean }): object;
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

export interface VersionedListQuery {
  limit: number;
  offset: number;
  workspace_id?: string;
  collection_id?: string;
  search?: string;
  /** `shared`: those other workspaces share with the caller's workspace (or `workspace_id`). */
  type?: "shared";
  show_prompt_share?: boolean;
}

export class VersionedResources<T extends Versioned, R extends VersionRecord, C> {
  readonly #kind: VersionedKind<T, R, C>;

  constructor(kind: VersionedKind<T, R, C>) {
    this.#kind = kind;
  }

  /** One the caller reaches (its own, or shared with its workspace), by id or slug. */
  load(deps: ControlDeps, principal: Principal, idOrSlug: string): Promise<T> {
    return loadReachable<T>(this.#kind.store(deps.records), principal, idOrSlug, {
      what: this.#kind.kind,
      code: this.#kind.notFoundCode,
    });
  }

  /** One of the caller's own workspace: what may be changed (a shared one is only read). */
  async loadOwn(deps: ControlDeps, principal: Principal, idOrSlug: string): Promise<T> {
    const resource = await this.load(deps, principal, idOrSlug);
    assertOwnWorkspace(principal, resource, this.#kind.plural);
    return resource;
  }

  /** The version, or NotFound naming the resource and the number. */
  async versionOf(records: Records, resource: T, version: number): Promise<R> {
    const record = await this.#kind.readVersion(records, resource.id, version);
    if (!record) {
      const name = `${this.#kind.kind[0]!.toUpperCase()}${this.#kind.kind.slice(1)}`;
      throw new NotFound(`${name} '${resource.slug ?? resource.id}' has no version ${version}.`, {
        code: "version_not_found",
      });
    }
    return record;
  }

  /** Writes a version once: a second writer of the same number (a concurrent update) gets Conflict. */
  async writeVersion(
    records: Records,
    principal: Principal,
    owner: { id: string; organisationId: string },
    version: number,
    content: C,
  ): Promise<R> {
    const stamp = { createdAt: Math.floor(Date.now() / 1000), createdBy: actorOf(principal) };
    const record = this.#kind.versionRecord(owner, version, content, stamp);
    try {
      await records.put({ ...record }, { exists: false });
    } catch (error) {
      if (error instanceof ConditionFailedError)
        throw new Conflict(`The ${this.#kind.kind} was changed concurrently; read it again and retry.`, {
          code: "conflict",
        });
      throw error;
    }
    return record;
  }

  /** Audits a change with the public view (sharing shown). */
  async audit(deps: ControlDeps, principal: Principal, action: string, before?: T, after?: T): Promise<void> {
    const { resourceType, present } = this.#kind;
    await changed(deps, principal, { action, resourceType, before, after }, (resource) =>
      present(resource, { showShare: true }),
    );
  }

  /**
   * Version 1 first (one is never without its content, even if the create stops half-way), then the record,
   * placed as `input` asks (core/control/prompts/places.ts); `extra` are the kind's own fields.
   */
  async create(
    deps: ControlDeps,
    principal: Principal,
    input: { name: string; slug?: string; string: string; workspace_id?: string; collection_id?: string },
    content: C,
    extra: Partial<T> = {},
  ): Promise<{ created: T; version: R }> {
    checkTemplate(input.string);
    const place = await placeOf(deps, principal, input);
    const id = newId(this.#kind.store(deps.records).idPrefix);
    const version = await this.writeVersion(
      deps.records,
      principal,
      { id, organisationId: principal.organisationId },
      1,
      content,
    );
    const fields = {
      name: input.name,
      slug: input.slug ?? slugFrom(input.name),
      workspaceId: place.workspaceId,
      collectionId: place.collectionId,
      status: "active",
      latestVersion: 1,
      defaultVersion: 1,
      ...extra,
      createdBy: actorOf(principal),
    } as unknown as Omit<T, "id" | "organisationId" | "version" | "createdAt" | "updatedAt">;
    const created = await this.#kind.store(deps.records).create(principal.organisationId, fields, { id });
    await this.audit(deps, principal, "create", undefined, created);
    return { created, version };
  }

  /** Newest first, with the total: the caller's workspace's (or `workspace_id`'s), or those shared with it. */
  async list(deps: ControlDeps, principal: Principal, query: VersionedListQuery): Promise<CountedPage<T>> {
    const { workspaceIdFilter, collectionId } = await listScope(deps, principal, query);
    const needle = query.search?.toLowerCase();
    const matches = (resource: T) => {
      if (query.type === "shared") {
        if (!workspaceIdFilter || !resource.sharedWith?.includes(workspaceIdFilter)) return false;
      } else if (workspaceIdFilter && resource.workspaceId !== workspaceIdFilter) return false;
      if (collectionId && resource.collectionId !== collectionId) return false;
      return !needle || `${resource.name} ${resource.slug ?? ""}`.toLowerCase().includes(needle);
    };
    const all = await this.#kind.store(deps.records).listAll(principal.organisationId, matches);
    return offsetPage(all, query.offset, query.limit);
  }

  /** One the caller reaches, with its published version, or `version`. */
  async get(
    deps: ControlDeps,
    principal: Principal,
    idOrSlug: string,
    version?: Lazy<number | undefined>,
  ): Promise<{ resource: T; version: R }> {
    const resource = await this.load(deps, principal, idOrSlug);
    const number = (await resolveLazy(version)) ?? resource.defaultVersion;
    return { resource, version: await this.versionOf(deps.records, resource, number) };
  }

  /** Saves `changes` (and the version written for them, if any), audited; answers it with that or its published version. */
  async update(
    deps: ControlDeps,
    principal: Principal,
    current: T,
    changes: Partial<T>,
    version?: R,
  ): Promise<{ updated: T; version: R }> {
    const updated = await this.#kind.store(deps.records).update(current, changes);
    await this.audit(deps, principal, "update", current, updated);
    return { updated, version: version ?? (await this.versionOf(deps.records, updated, updated.defaultVersion)) };
  }

  /** `makeDefault`: publishes an existing version. */
  async publish(deps: ControlDeps, principal: Principal, idOrSlug: string, version: Lazy<number>): Promise<T> {
    const current = await this.loadOwn(deps, principal, idOrSlug);
    const number = await resolveLazy(version);
    await this.versionOf(deps.records, current, number);
    const updated = await this.#kind.store(deps.records).update(current, {
      defaultVersion: number,
      updatedBy: actorOf(principal),
    } as Partial<T>);
    await this.audit(deps, principal, "publish", current, updated);
    return updated;
  }

  /** Its versions, newest first, a page of them. */
  async versions(
    deps: ControlDeps,
    principal: Principal,
    input: { idOrSlug: string; limit: number; offset: number },
  ): Promise<{ resource: T; page: CountedPage<R> }> {
    const resource = await this.load(deps, principal, input.idOrSlug);
    const versions: R[] = [];
    let cursor: string | undefined;
    do {
      const page = await deps.records.query({
        partition: this.#kind.versionPartition(resource.id),
        prefix: "VERSION#",
        order: "desc",
        limit: 1000,
        cursor,
      });
      versions.push(...(page.items as unknown as R[]));
      cursor = page.cursor;
    } while (cursor);
    return { resource, page: offsetPage(versions, input.offset, input.limit) };
  }

  /** The record and all its versions, audited. */
  async remove(deps: ControlDeps, principal: Principal, resource: T): Promise<{ id: string }> {
    await this.#kind.store(deps.records).delete(resource);
    await deletePartition(deps.records, this.#kind.versionPartition(resource.id), "VERSION#");
    await this.audit(deps, principal, "delete", resource);
    return { id: resource.id };
  }
}
