import { putWithinLimit } from "./limited-write.ts";
import { type ResourceOwner, ownerKey } from "../../auth/resource-owner.ts";
import { HttpError, notFound } from "../../http/errors.ts";
import { newId } from "../../util/ids.ts";
import type { Services } from "../../services.ts";
import { type Blobs, ConditionFailedError, type RecordItem, type Records } from "../../store/ports.ts";
import type { FileListQuery, FileObject, FileStore, NewFile, StoredFile } from "./types.ts";

/**
 * Files (spec 2.7) on the Records and Blobs ports, single-item writes only:
 * - one item per file, pk `FILES#<org>#<workspace>`, sk `FILE#<id>`: the owner is part of the key, so another
 *   workspace's lookup of the same id reads another partition and finds nothing. `ttl` = `expires_at`, so an
 *   expired file is absent on every platform. gsi1 (`FILES#<org>#<workspace>`, `<created ms>#<id>`) orders the
 *   list by creation, whatever the ids look like (the gateway's own output files have fixed ids). Each provider
 *   copy is one attribute `link#<provider key>` of the item, so concurrent links need no read-modify-write;
 * - the bytes in one blob, `files/<org>/<workspace>/<id>`, streamed in (counted as they pass, refused past the
 *   limit) and out. Blobs do not expire by themselves: past its ttl a file's blob is unreachable.
 */

export interface FileStoreOptions {
  records: Records;
  blobs: Blobs;
  /** Default upload limit in bytes (GATEWAY_MAX_UPLOAD_BYTES); NewFile.maxBytes overrides it. */
  maxBytes: number;
  /** Unix ms; tests move time. */
  now?: () => number;
}

export const FILES_BLOB_PREFIX = "files/";

/** Ids the gateway makes (`file-...`) or is given for its own files; anything else cannot name a file. */
const FILE_ID = /^file-[A-Za-z0-9_.-]{1,200}$/;
export const isFileId = (id: string): boolean => FILE_ID.test(id);

/** A new client file id: `file-` and the sortable, unguessable tail of core/util/ids.ts. */
export const newFileId = (now = Date.now()): string => `file-${newId("file", now).slice("file_".length)}`;

const partition = (owner: ResourceOwner) => `FILES#${ownerKey(owner)}`;
const sortKey = (id: string) => `FILE#${id}`;
/** Creation order: ms, zero-padded so that strings sort as numbers, then the id to break ties. */
const listKey = (createdMs: number, id: string) => `${String(createdMs).padStart(15, "0")}#${id}`;
/** Above every listKey (digits and `#`): the upper bound of an open-ended range. */
const LIST_END = "~";

/** A file's bytes written, its record not yet (RecordFileStore.stage). */
export interface StagedFile {
  owner: ResourceOwner;
  id: string;
  /** A fixed id (NewFile.id): the bytes replaced its file's. */
  fixed: boolean;
  blobKey: string;
  contentType: string;
  bytes: number;
  createdMs: number;
}

/** Attributes of the file's item holding its provider copies: `link#<provider key>` = the provider's file id. */
const LINK_PREFIX = "link#";

export class RecordFileStore implements FileStore {
  readonly #records: Records;
  readonly #blobs: Blobs;
  readonly #maxBytes: number;
  readonly #now: () => number;

  constructor(options: FileStoreOptions) {
    this.#records = options.records;
    this.#blobs = options.blobs;
    this.#maxBytes = options.maxBytes;
    this.#now = options.now ?? Date.now;
  }

  async create(owner: ResourceOwner, input: NewFile): Promise<StoredFile> {
    const staged = await this.stage(owner, input);
    return this.commit(staged, input);
  }

  /**
   * The first half of create: the bytes, under the file's id, not yet a file (no record). An upload streams its
   * file part here before it has read the form's other fields (they may follow the file), then commits or discards.
   */
  async stage(
    owner: ResourceOwner,
    input: Pick<NewFile, "body" | "contentType" | "maxBytes" | "id">,
  ): Promise<StagedFile> {
    const createdMs = this.#now();
    const fixed = input.id !== undefined;
    const id = input.id ?? newFileId(createdMs);
    if (!isFileId(id)) throw new RangeError(`not a file id: ${JSON.stringify(id)}`);
    const blobKey = this.#blobKey(owner, id);
    const contentType = input.contentType || "application/octet-stream";
    const limit = input.maxBytes ?? this.#maxBytes;
    const bytes = await this.#writeBlob(blobKey, input.body, limit, contentType, !fixed);
    return { owner, id, fixed, blobKey, contentType, bytes, createdMs };
  }

  /** The second half of create: the record that makes the staged bytes a file. */
  async commit(
    staged: StagedFile,
    input: Pick<NewFile, "filename" | "purpose" | "expiresInSeconds">,
  ): Promise<StoredFile> {
    const { owner, id, blobKey, contentType, fixed } = staged;
    const createdAt = Math.floor(staged.createdMs / 1000);
    const file: FileObject = {
      id,
      object: "file",
      bytes: staged.bytes,
      created_at: createdAt,
      expires_at: input.expiresInSeconds === undefined ? null : createdAt + input.expiresInSeconds,
      filename: input.filename,
      purpose: input.purpose,
      status: "processed",
      status_details: null,
    };
    const item: RecordItem = {
      pk: partition(owner),
      sk: sortKey(id),
      gsi1pk: partition(owner),
      gsi1sk: listKey(staged.createdMs, id),
      file,
      blobKey,
      contentType,
      ...(file.expires_at === null ? {} : { ttl: file.expires_at }),
    };
    try {
      // A client's file is new (an id collision must not replace another file); a fixed id replaces its file.
      await this.#records.put(item, fixed ? undefined : { exists: false });
    } catch (error) {
      await this.discard(staged);
      throw error;
    }
    return { file, owner, blobKey, contentType, providerFiles: {} };
  }

  /** Removes staged bytes that will not become a file (a fixed id's bytes are its file's: kept). */
  async discard(staged: StagedFile): Promise<void> {
    if (!staged.fixed) await this.#blobs.delete(staged.blobKey).catch(() => {});
  }

  async get(owner: ResourceOwner, id: string): Promise<StoredFile | undefined> {
    if (!isFileId(id)) return undefined;
    const item = await this.#records.get(partition(owner), sortKey(id));
    return item && storedFileOf(item, owner);
  }

  async list(owner: ResourceOwner, query: FileListQuery): Promise<{ items: StoredFile[]; hasMore: boolean }> {
    const range = await this.#rangeAfter(owner, query);
    if (!range) return { items: [], hasMore: false };
    const items: StoredFile[] = [];
    let cursor: string | undefined;
    // One more than asked tells whether more follow. Pages are read until enough match the purpose.
    do {
      const page = await this.#records.query({
        partition: partition(owner),
        index: "gsi1",
        ...range,
        order: query.order,
        limit: Math.min(1000, query.limit + 1 - items.length + 1),
        cursor,
      });
      for (const item of page.items) {
        if (item.gsi1sk === range.skip) continue;
        const stored = storedFileOf(item, owner);
        if (query.purpose !== undefined && stored.file.purpose !== query.purpose) continue;
        items.push(stored);
        if (items.length > query.limit) break;
      }
      cursor = page.cursor;
    } while (cursor && items.length <= query.limit);
    const hasMore = items.length > query.limit;
    return { items: items.slice(0, query.limit), hasMore };
  }

  async content(
    owner: ResourceOwner,
    id: string,
  ): Promise<{ file: StoredFile; body: ReadableStream<Uint8Array> } | undefined> {
    const file = await this.get(owner, id);
    if (!file) return undefined;
    const blob = await this.#blobs.get(file.blobKey);
    return blob && { file, body: blob.body };
  }

  async delete(owner: ResourceOwner, id: string): Promise<boolean> {
    const file = await this.get(owner, id);
    if (!file) return false;
    // The record first: once it is gone the file is absent, whatever happens to the blob's delete.
    await this.#records.delete(partition(owner), sortKey(id));
    await this.#blobs.delete(file.blobKey);
    return true;
  }

  async linkProviderFile(owner: ResourceOwner, id: string, providerKey: string, providerFileId: string): Promise<void> {
    if (!isFileId(id)) throw fileNotFound(id);
    try {
      // One attribute per link: concurrent links (two providers) never overwrite each other.
      await this.#records.update(
        partition(owner),
        sortKey(id),
        { set: { [`${LINK_PREFIX}${providerKey}`]: providerFileId } },
        { exists: true },
      );
    } catch (error) {
      if (error instanceof ConditionFailedError) throw fileNotFound(id);
      throw error;
    }
  }

  /**
   * The query range for `after` (undefined when nothing can follow): the listed file's own sort key bounds the
   * range and is skipped. A file since deleted or expired still places the cursor by the time in its id.
   */
  async #rangeAfter(
    owner: ResourceOwner,
    query: FileListQuery,
  ): Promise<{ from?: string; to?: string; skip?: string } | undefined> {
    if (query.after === undefined) return {};
    let key: string | undefined;
    if (isFileId(query.after)) {
      const item = await this.#records.get(partition(owner), sortKey(query.after));
      if (typeof item?.gsi1sk === "string") key = item.gsi1sk;
      else {
        const createdMs = timeOfGeneratedId(query.after);
        if (createdMs !== undefined) key = listKey(createdMs, query.after);
      }
    }
    if (key === undefined) return undefined;
    return query.order === "asc" ? { from: key, to: LIST_END, skip: key } : { to: key, skip: key };
  }

  /** Streams the body into the blob, counting bytes; past `limit` the write fails with a 413 and keeps nothing. */
  async #writeBlob(
    key: string,
    body: NewFile["body"],
    limit: number,
    contentType: string,
    cleanUp: boolean,
  ): Promise<number> {
    if (typeof body === "string" || body instanceof Uint8Array) {
      const size = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
      if (size > limit) throw fileTooLarge(limit);
      return (await this.#blobs.put(key, body, { contentType })).size;
    }
    return putWithinLimit(this.#blobs, key, body, {
      limit,
      tooLarge: () => fileTooLarge(limit),
      contentType,
      keepOnFailure: !cleanUp,
    });
  }

  #blobKey(owner: ResourceOwner, id: string): string {
    const workspace = owner.workspaceId || "_";
    return `${FILES_BLOB_PREFIX}${encodeURIComponent(owner.organisationId)}/${encodeURIComponent(workspace)}/${id}`;
  }
}

export function fileTooLarge(limit: number): HttpError {
  return new HttpError(413, `The file is larger than the limit of ${limit} bytes.`, { code: "file_too_large" });
}

function storedFileOf(item: RecordItem, owner: ResourceOwner): StoredFile {
  const providerFiles: Record<string, string> = {};
  for (const [name, value] of Object.entries(item)) {
    if (name.startsWith(LINK_PREFIX) && typeof value === "string")
      providerFiles[name.slice(LINK_PREFIX.length)] = value;
  }
  return {
    file: item.file as FileObject,
    owner,
    blobKey: String(item.blobKey),
    contentType: String(item.contentType),
    providerFiles,
  };
}

const fileNotFound = (id: string) => notFound(`No such File object: ${id}`);

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

/** The creation ms a generated id (`file-` + newId's tail) carries in its first 10 characters, else undefined. */
function timeOfGeneratedId(id: string): number | undefined {
  const match = /^file-([0-9a-hjkmnp-tv-z]{10})[0-9a-hjkmnp-tv-z]{16}$/.exec(id);
  if (!match) return undefined;
  let ms = 0;
  for (const char of match[1]!) ms = ms * 32 + CROCKFORD.indexOf(char);
  return ms;
}

const storesInUse = new WeakMap<object, RecordFileStore>();

/** The file store of a process's stores (one per Stores object); a FileStore, with stage/commit for uploads. */
export function fileStoreOf(services: Pick<Services, "stores" | "settings">): RecordFileStore {
  let store = storesInUse.get(services.stores);
  if (!store) {
    store = new RecordFileStore({
      records: services.stores.records,
      blobs: services.stores.blobs,
      maxBytes: services.settings.GATEWAY_MAX_UPLOAD_BYTES,
    });
    storesInUse.set(services.stores, store);
  }
  return store;
}
