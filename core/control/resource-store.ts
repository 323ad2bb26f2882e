import { newId } from "../util/ids.ts";
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
 */
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

  constructor(records: Records, kind: string, idPrefix: string, otherIdPrefixes: string[] = []) {
    this.records = records;
    this.kind = kind;
    this.idPrefix = idPrefix;
    this.idPrefixes = [idPrefix, ...otherIdPrefixes].map((prefix) => `${prefix}_`);
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
    if (resource.slug) await this.claimSlug(organisationId, resource.slug, id);
    await this.records.put({ ...resource, ...this.keys(resource) }, { exists: false });
    return resource;
  }

  /** By id or slug, only within the organisation. */
  async get(organisationId: string, idOrSlug: string): Promise<T | undefined> {
    let id = idOrSlug;
    if (!this.isId(idOrSlug)) {
      const pointer = await this.records.get(this.slugKey(organisationId, idOrSlug), "SLUG");
      if (!pointer) return undefined;
      id = pointer.id as string;
    }
    const item = await this.records.get(`${this.kind}#${id}`, this.kind);
    if (!item || item.organisationId !== organisationId) return undefined;
    return strip(item) as T;
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
    if (slugChanged && next.slug) await this.claimSlug(current.organisationId, next.slug, current.id);
    try {
      await this.records.put({ ...next, ...this.keys(next) }, { equals: { version: current.version } });
    } catch (error) {
      if (slugChanged && next.slug) await this.releaseSlug(current.organisationId, next.slug, current.id);
      if (error instanceof ConditionFailedError)
        throw new Conflict(`The ${this.kind.toLowerCase()} was changed concurrently; read it again and retry.`);
      throw error;
    }
    if (slugChanged && current.slug) await this.releaseSlug(current.organisationId, current.slug, current.id);
    return next;
  }

  async delete(resource: T): Promise<void> {
    await this.records.delete(`${this.kind}#${resource.id}`, this.kind);
    if (resource.slug) await this.releaseSlug(resource.organisationId, resource.slug, resource.id);
  }

  /** Every resource of the organisation that `filter` keeps, newest first (lists of tens, read whole). */
  async listAll(organisationId: string, filter?: (resource: T) => boolean): Promise<T[]> {
    const all: T[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.list(organisationId, { limit: 1000, cursor, filter });
      all.push(...page.items);
      cursor = page.cursor;
    } while (cursor);
    return all;
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

  private async claimSlug(organisationId: string, slug: string, id: string): Promise<void> {
    const pk = this.slugKey(organisationId, slug);
    try {
      await this.records.put({ pk, sk: "SLUG", id }, { exists: false });
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      // A pointer left by a create that crashed before writing its resource may be reclaimed.
      const pointer = await this.records.get(pk, "SLUG");
      const owner = pointer && (await this.records.get(`${this.kind}#${pointer.id}`, this.kind));
      if (owner)
        throw new Conflict(`A ${this.kind.toLowerCase()} with slug '${slug}' already exists.`, { param: "slug" });
      await this.records.put({ pk, sk: "SLUG", id }, { equals: { id: pointer?.id ?? null } });
    }
  }

  private async releaseSlug(organisationId: string, slug: string, id: string): Promise<void> {
    await this.records.delete(this.slugKey(organisationId, slug), "SLUG", { equals: { id } }).catch((error) => {
      if (!(error instanceof ConditionFailedError)) throw error;
    });
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
