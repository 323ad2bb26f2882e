import { newId } from "../ids.ts";
import { ConditionFailedError, type Page, type Records } from "../store/ports.ts";
import { Conflict } from "./errors.ts";

/**
 * Storage of one kind of organisation-owned control-plane resource (workspaces, configs, integrations, ...),
 * with single-item conditional writes only (DynamoDB without transactions):
 * - the resource: pk `<KIND>#<id>`, sk `<KIND>`, listed per organisation through gsi1
 *   (`ORG#<org>#<KIND>`, sort key `<createdAt>#<id>`), with a `version` for optimistic concurrency;
 * - its slug, when it has one: pk `SLUG#<KIND>#<org>#<slug>` pointing at the id. Claimed before the
 *   resource is written (a duplicate answers 409); a crash between the two leaves a pointer to nothing,
 *   which readers treat as absent and a later create may reclaim.
 * Ids are prefixed (`<prefix>_...`), so a lookup can tell an id from a slug.
 *
 * Slugs are unique in the organisation by default. A kind whose slugs are unique per workspace
 * (`slugScope: "workspace"`: saved configs) keeps, for a workspace's resource, a second pointer
 * `WSSLUG#<KIND>#<org>#<workspace>#<slug>`, and uses the organisation's pointer as an alias held by the first
 * resource to claim it. A workspace sees its own resources and the organisation-level ones, so a 409 answers
 * only a slug it could see taken there: another workspace's resource under the same slug is never told apart
 * from no resource (no existence oracle). Lookups with the caller's workspace read its pointer first, then the
 * organisation's (an organisation-level resource, the alias, or a resource stored before workspace pointers);
 * lookups without one read the organisation's pointer.
 */
export type SlugScope = "organisation" | "workspace";

/** Where a slug lookup looks: the caller's workspace first, when it has one. */
export interface SlugLookup {
  workspaceId?: string;
}
export interface Resource {
  id: string;
  organisationId: string;
  workspaceId?: string;
  slug?: string;
  version: number;
  createdAt: number;
  updatedAt: number;
  [field: string]: unknown;
}

export class ResourceStore<T extends Resource> {
  private readonly records: Records;
  readonly kind: string;
  readonly idPrefix: string;
  /** Every prefix an id of this kind may carry: `idPrefix`, and others this kind took over (`vk` for integrations). */
  private readonly idPrefixes: string[];
  private readonly slugScope: SlugScope;

  constructor(
    records: Records,
    kind: string,
    idPrefix: string,
    otherIdPrefixes: string[] = [],
    slugScope: SlugScope = "organisation",
  ) {
    this.records = records;
    this.kind = kind;
    this.idPrefix = idPrefix;
    this.idPrefixes = [idPrefix, ...otherIdPrefixes].map((prefix) => `${prefix}_`);
    this.slugScope = slugScope;
  }

  isId(value: string): boolean {
    return this.idPrefixes.some((prefix) => value.startsWith(prefix));
  }

  /**
   * `options.id` lets a caller fix the id beforehand (bootstrap, a migrated record); it must carry one of this
   * kind's prefixes. `options.createdAt` keeps a migrated record's creation time.
   */
  async create(
    organisationId: string,
    fields: Omit<T, "id" | "organisationId" | "version" | "createdAt" | "updatedAt">,
    options: { id?: string; createdAt?: number } = {},
  ): Promise<T> {
    const id = options.id ?? newId(this.idPrefix);
    const now = Math.floor(Date.now() / 1000);
    const createdAt = options.createdAt ?? now;
    const resource = { ...fields, id, organisationId, version: 1, createdAt, updatedAt: now } as T;
    if (resource.slug) await this.claimSlug(resource, resource.slug);
    await this.records.put({ ...resource, ...this.keys(resource) }, { exists: false });
    return resource;
  }

  /**
   * By id or slug, only within the organisation. A slug is looked up in `lookup.workspaceId` first, for a kind
   * whose slugs are unique per workspace; callers still check the resource is one the caller may see.
   */
  async get(organisationId: string, idOrSlug: string, lookup: SlugLookup = {}): Promise<T | undefined> {
    if (this.isId(idOrSlug)) return this.byId(organisationId, idOrSlug);
    if (this.slugScope === "workspace" && lookup.workspaceId) {
      const own = await this.byPointer(
        organisationId,
        this.workspaceSlugKey(organisationId, lookup.workspaceId, idOrSlug),
      );
      if (own) return own;
    }
    return this.byPointer(organisationId, this.slugKey(organisationId, idOrSlug));
  }

  private async byId(organisationId: string, id: string): Promise<T | undefined> {
    const item = await this.records.get(`${this.kind}#${id}`, this.kind);
    if (!item || item.organisationId !== organisationId) return undefined;
    return strip(item) as T;
  }

  private async byPointer(organisationId: string, pk: string): Promise<T | undefined> {
    const pointer = await this.records.get(pk, "SLUG");
    return pointer ? this.byId(organisationId, pointer.id as string) : undefined;
  }

  /** Applies a change if the resource still has the version that was read (else 409). Slug changes move the pointer. */
  async update(current: T, changes: Partial<T>): Promise<T> {
    const next = {
      ...current,
      ...changes,
      version: current.version + 1,
      updatedAt: Math.floor(Date.now() / 1000),
    } as T;
    const slugChanged = next.slug !== current.slug;
    if (slugChanged && next.slug) await this.claimSlug(current, next.slug);
    try {
      await this.records.put({ ...next, ...this.keys(next) }, { equals: { version: current.version } });
    } catch (error) {
      if (slugChanged && next.slug) await this.releaseSlug(current, next.slug);
      if (error instanceof ConditionFailedError)
        throw new Conflict(`The ${this.kind.toLowerCase()} was changed concurrently; read it again and retry.`);
      throw error;
    }
    if (slugChanged && current.slug) await this.releaseSlug(current, current.slug);
    return next;
  }

  async delete(resource: T): Promise<void> {
    await this.records.delete(`${this.kind}#${resource.id}`, this.kind);
    if (resource.slug) await this.releaseSlug(resource, resource.slug);
  }

  /**
   * Newest first; `filter` narrows in memory (the page is filled across store pages). The cursor is the sort
   * key of the last resource returned. Throws RangeError for a malformed cursor.
   */
  async list(
    organisationId: string,
    options: { limit: number; cursor?: string; filter?: (resource: T) => boolean },
  ): Promise<Page<T>> {
    const after = options.cursor ? decodeAfter(options.cursor) : undefined;
    const items: T[] = [];
    let storeCursor: string | undefined;
    do {
      const page = await this.records.query({
        partition: `ORG#${organisationId}#${this.kind}`,
        index: "gsi1",
        order: "desc",
        ...(after ? { from: "0", to: after } : {}),
        limit: Math.min(1000, Math.max(options.limit + 1, 25)),
        cursor: storeCursor,
      });
      for (const item of page.items) {
        if (after && String(item.gsi1sk) >= after) continue;
        const resource = strip(item) as T;
        if (options.filter && !options.filter(resource)) continue;
        if (items.length === options.limit)
          return { items, cursor: encodeAfter(String(this.keys(items.at(-1)!).gsi1sk)) };
        items.push(resource);
      }
      storeCursor = page.cursor;
    } while (storeCursor);
    return { items };
  }

  private keys(resource: T) {
    return {
      pk: `${this.kind}#${resource.id}`,
      sk: this.kind,
      gsi1pk: `ORG#${resource.organisationId}#${this.kind}`,
      gsi1sk: `${String(resource.createdAt).padStart(12, "0")}#${resource.id}`,
    };
  }

  private slugKey(organisationId: string, slug: string): string {
    return `SLUG#${this.kind}#${organisationId}#${slug}`;
  }

  private workspaceSlugKey(organisationId: string, workspaceId: string, slug: string): string {
    return `WSSLUG#${this.kind}#${organisationId}#${workspaceId}#${slug}`;
  }

  /** The workspace whose slug namespace `resource` belongs to, for a kind with per-workspace slugs. */
  private slugWorkspace(resource: Pick<Resource, "workspaceId">): string | undefined {
    return this.slugScope === "workspace" ? resource.workspaceId : undefined;
  }

  /** Claims `slug` for `resource` (409 when taken where its creator could see it); see the class comment. */
  private async claimSlug(resource: Pick<Resource, "id" | "organisationId" | "workspaceId">, slug: string) {
    const { id, organisationId } = resource;
    const workspaceId = this.slugWorkspace(resource);
    const taken = () =>
      new Conflict(`A ${this.kind.toLowerCase()} with slug '${slug}' already exists.`, { param: "slug" });
    if (!workspaceId) {
      if (!(await this.claimPointer(this.slugKey(organisationId, slug), id))) throw taken();
      return;
    }
    // Taken in the organisation by a resource this workspace sees (organisation-level, or its own stored before
    // workspace pointers): a conflict it may be told of. Another workspace's is not.
    const holder = await this.byPointer(organisationId, this.slugKey(organisationId, slug));
    if (holder && holder.id !== id && (holder.workspaceId === undefined || holder.workspaceId === workspaceId)) {
      throw taken();
    }
    if (!(await this.claimPointer(this.workspaceSlugKey(organisationId, workspaceId, slug), id))) throw taken();
    // The organisation's alias, for lookups without a workspace (organisation keys), when nobody holds it.
    await this.claimPointer(this.slugKey(organisationId, slug), id);
  }

  /** Points `pk` at `id` unless a live resource holds it; false when one does. */
  private async claimPointer(pk: string, id: string): Promise<boolean> {
    try {
      await this.records.put({ pk, sk: "SLUG", id }, { exists: false });
      return true;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      // A pointer left by a create that crashed before writing its resource may be reclaimed.
      const pointer = await this.records.get(pk, "SLUG");
      if (pointer?.id === id) return true;
      const owner = pointer && (await this.records.get(`${this.kind}#${pointer.id}`, this.kind));
      if (owner) return false;
      await this.records.put({ pk, sk: "SLUG", id }, { equals: { id: pointer?.id ?? null } });
      return true;
    }
  }

  private async releaseSlug(resource: Pick<Resource, "id" | "organisationId" | "workspaceId">, slug: string) {
    const { id, organisationId } = resource;
    const workspaceId = this.slugWorkspace(resource);
    const keys = [this.slugKey(organisationId, slug)];
    if (workspaceId) keys.push(this.workspaceSlugKey(organisationId, workspaceId, slug));
    for (const pk of keys) {
      await this.records.delete(pk, "SLUG", { equals: { id } }).catch((error) => {
        if (!(error instanceof ConditionFailedError)) throw error;
      });
    }
  }
}

function strip(item: Record<string, unknown>): Record<string, unknown> {
  const { pk, sk, gsi1pk, gsi1sk, ttl, ...rest } = item;
  return rest;
}

function encodeAfter(sortKey: string): string {
  return Buffer.from(`after:${sortKey}`).toString("base64url");
}

function decodeAfter(cursor: string): string {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  if (!text.startsWith("after:") || text.length < 8) throw new RangeError("invalid cursor");
  return text.slice(6);
}
