import { putWithinLimit } from "./limited-write.ts";
import { createHash } from "node:crypto";
import { type ResourceOwner, ownerKey } from "../../auth/resource-owner.ts";
import type { DeferredRequest } from "../../inference/gateway/deferred-request.ts";
import { HttpError, badRequest, notFound } from "../../http/errors.ts";
import { newId } from "../../util/ids.ts";
import { type Blobs, ConditionFailedError, type RecordItem, type Records } from "../../store/ports.ts";
import type { Services } from "../../services.ts";
import { type RecordFileStore, fileStoreOf, newFileId } from "./file-store.ts";
import type { FileObject, FilePurpose, StoredFile } from "./types.ts";

/**
 * OpenAI's Uploads API (a file sent in parts, each its own request: a Lambda function URL takes at most 6 MB a
 * request) on the Records and Blobs ports, single-item conditional writes only:
 * - one item per upload, pk `UPLOADS#<org>#<workspace>`, sk `UPLOAD#<id>`: the owner is in the key, so another
 *   workspace finds nothing. It holds the Upload object, `received` (the bytes of the parts accepted so far) and
 *   the id its file will get. Every change of it is conditional on what was read (`status`, `received`, `claim`),
 *   so parts never add up past the declared `bytes`, and two completes never make two files;
 * - one item per part, sk `UPLOAD#<id>#PART#<part id>`, and the part's bytes in one blob
 *   `uploads/<org>/<workspace>/<upload id>/<part id>`;
 * - `ttl` a day past `expires_at`: an expired upload answers `expired` (and refuses parts) for a day, then is gone.
 * Complete streams the parts' blobs one after another into the file store (never a whole part in memory).
 */

export interface UploadObject {
  id: string;
  object: "upload";
  bytes: number;
  created_at: number;
  expires_at: number;
  filename: string;
  purpose: FilePurpose;
  status: "pending" | "completed" | "cancelled" | "expired";
  file: FileObject | null;
}

export interface UploadPartObject {
  id: string;
  object: "upload.part";
  created_at: number;
  upload_id: string;
}

export interface StoredUpload {
  upload: UploadObject;
  owner: ResourceOwner;
  mimeType: string;
  /** Bytes of the parts accepted so far. */
  received: number;
  /** The create request's routing (sealed) when it named one provider: the completed file is copied there. */
  deferred?: DeferredRequest;
}

export interface NewUpload {
  filename: string;
  purpose: FilePurpose;
  bytes: number;
  mimeType: string;
  deferred?: DeferredRequest;
}

export interface UploadStoreOptions {
  records: Records;
  blobs: Blobs;
  files: RecordFileStore;
  /** Unix ms; tests move time. */
  now?: () => number;
}

/** OpenAI's: an upload expires an hour after it is created. */
export const UPLOAD_LIFETIME_SECONDS = 3600;
/** OpenAI's limit on one part. */
export const MAX_PART_BYTES = 64 * 1024 * 1024;
/** How long an item outlives its expiry (answering `expired`) before it is gone. */
const TTL_GRACE_SECONDS = 24 * 3600;
/** A complete that crashed leaves its claim: another may take the upload over after this long. */
const CLAIM_LEASE_MS = 15 * 60 * 1000;

const UPLOAD_ID = /^upload_[0-9a-hjkmnp-tv-z]{26}$/;
const PART_ID = /^part_[0-9a-hjkmnp-tv-z]{26}$/;
export const isUploadId = (id: string) => UPLOAD_ID.test(id);

interface PendingItem {
  raw: RecordItem;
  upload: UploadObject;
  received: number;
  mimeType: string;
  fileId: string;
  claim: string | null;
}

const partition = (owner: ResourceOwner) => `UPLOADS#${ownerKey(owner)}`;
const uploadKey = (id: string) => `UPLOAD#${id}`;
const partPrefix = (id: string) => `UPLOAD#${id}#PART#`;

export class UploadStore {
  readonly #records: Records;
  readonly #blobs: Blobs;
  readonly #files: RecordFileStore;
  readonly #now: () => number;

  constructor(options: UploadStoreOptions) {
    this.#records = options.records;
    this.#blobs = options.blobs;
    this.#files = options.files;
    this.#now = options.now ?? Date.now;
  }

  async create(owner: ResourceOwner, input: NewUpload): Promise<StoredUpload> {
    const nowMs = this.#now();
    const createdAt = Math.floor(nowMs / 1000);
    const upload: UploadObject = {
      id: newId("upload", nowMs),
      object: "upload",
      bytes: input.bytes,
      created_at: createdAt,
      expires_at: createdAt + UPLOAD_LIFETIME_SECONDS,
      filename: input.filename,
      purpose: input.purpose,
      status: "pending",
      file: null,
    };
    await this.#records.put(
      {
        pk: partition(owner),
        sk: uploadKey(upload.id),
        ttl: upload.expires_at + TTL_GRACE_SECONDS,
        upload,
        mimeType: input.mimeType,
        status: upload.status,
        received: 0,
        fileId: newFileId(nowMs),
        ...(input.deferred && { deferred: input.deferred }),
      },
      { exists: false },
    );
    return {
      upload,
      owner,
      mimeType: input.mimeType,
      received: 0,
      ...(input.deferred && { deferred: input.deferred }),
    };
  }

  /** Undefined when absent or another workspace's; an upload past its expiry reads `expired`. */
  async get(owner: ResourceOwner, id: string): Promise<StoredUpload | undefined> {
    const item = await this.#item(owner, id);
    return item && this.#storedOf(item, owner);
  }

  /**
   * Stores one part (at most MAX_PART_BYTES, and never past the upload's declared bytes) and answers it. The
   * bytes go to Blobs first; the upload's `received` is then raised conditionally on the value read, so parts
   * sent at once cannot together pass `bytes`.
   */
  async addPart(owner: ResourceOwner, id: string, body: ReadableStream<Uint8Array>): Promise<UploadPartObject> {
    const item = await this.#pendingItem(owner, id);
    const remaining = item.upload.bytes - item.received;
    const nowMs = this.#now();
    const partId = newId("part", nowMs);
    const blobKey = this.#partBlobKey(owner, id, partId);
    const size = await writeCounted(this.#blobs, blobKey, body, Math.min(MAX_PART_BYTES, remaining), remaining);
    try {
      await this.#reserve(owner, id, size);
      await this.#records.put({
        pk: partition(owner),
        sk: `${partPrefix(id)}${partId}`,
        ttl: item.upload.expires_at + TTL_GRACE_SECONDS,
        bytes: size,
        blobKey,
      });
    } catch (error) {
      await this.#blobs.delete(blobKey).catch(() => {});
      throw error;
    }
    return { id: partId, object: "upload.part", created_at: Math.floor(nowMs / 1000), upload_id: id };
  }

  /**
   * Joins the parts in `partIds` order into one file (its bytes must total the declared `bytes`, and match `md5`
   * when given), deletes the parts, and answers the completed upload. The upload is claimed first (a conditional
   * write), so a second complete at the same time is refused; the file's id is fixed at create, so a complete
   * that takes over a crashed one's claim replaces, never duplicates, the file. `afterFile` runs once the file
   * exists, before the upload is marked completed (the copy to a provider); its failure deletes the file.
   */
  async complete(
    owner: ResourceOwner,
    id: string,
    input: { partIds: string[]; md5?: string },
    afterFile?: (file: StoredFile, upload: StoredUpload) => Promise<void>,
  ): Promise<StoredUpload> {
    const item = await this.#pendingItem(owner, id);
    const parts = await this.#partsInOrder(owner, id, input.partIds);
    const total = parts.reduce((sum, part) => sum + part.bytes, 0);
    if (total !== item.upload.bytes) {
      throw badRequest(
        `The parts total ${total} bytes, but the upload was created with bytes = ${item.upload.bytes}.`,
        "part_ids",
        "invalid_value",
      );
    }
    const claim = `${this.#now()}#${newId("claim")}`;
    await this.#claim(owner, item, claim);
    const upload = this.#storedOf(item.raw, owner);
    let stored: StoredFile | undefined;
    try {
      const md5 = createHash("md5");
      const staged = await this.#files.stage(owner, {
        id: item.fileId,
        body: concatenated(this.#blobs, parts, md5),
        contentType: item.mimeType,
        maxBytes: item.upload.bytes,
      });
      const digest = md5.digest("hex");
      if (staged.bytes !== item.upload.bytes || (input.md5 !== undefined && input.md5.toLowerCase() !== digest)) {
        await this.#blobs.delete(staged.blobKey).catch(() => {});
        throw staged.bytes !== item.upload.bytes
          ? badRequest(`The parts hold ${staged.bytes} bytes, not ${item.upload.bytes}.`, "part_ids", "invalid_value")
          : badRequest(`The file's MD5 is ${digest}, not the given md5.`, "md5", "invalid_value");
      }
      stored = await this.#files.commit(staged, { filename: item.upload.filename, purpose: item.upload.purpose });
      await afterFile?.(stored, upload);
    } catch (error) {
      if (stored) await this.#files.delete(owner, stored.file.id).catch(() => {});
      await this.#release(owner, id, claim).catch(() => {});
      throw error;
    }
    const completed: UploadObject = { ...item.upload, status: "completed", file: stored.file };
    await this.#records.update(
      partition(owner),
      uploadKey(id),
      { set: { upload: completed, status: completed.status }, remove: ["claim"] },
      { equals: { claim } },
    );
    await this.#deleteParts(owner, id);
    return { ...upload, upload: completed };
  }

  /** A pending upload becomes cancelled and its parts are deleted; any other state is refused (400). */
  async cancel(owner: ResourceOwner, id: string): Promise<StoredUpload> {
    const item = await this.#pendingItem(owner, id);
    const cancelled: UploadObject = { ...item.upload, status: "cancelled" };
    try {
      await this.#records.update(
        partition(owner),
        uploadKey(id),
        { set: { upload: cancelled, status: cancelled.status } },
        { equals: { status: "pending", claim: item.claim } },
      );
    } catch (error) {
      if (error instanceof ConditionFailedError) throw await this.#notPendingError(owner, id);
      throw error;
    }
    await this.#deleteParts(owner, id);
    return { ...this.#storedOf(item.raw, owner), upload: cancelled };
  }

  async #item(owner: ResourceOwner, id: string): Promise<RecordItem | undefined> {
    if (!isUploadId(id)) return undefined;
    return this.#records.get(partition(owner), uploadKey(id));
  }

  /** The upload when it takes parts, a complete or a cancel: pending, unexpired, not being completed. */
  async #pendingItem(owner: ResourceOwner, id: string): Promise<PendingItem> {
    const raw = await this.#item(owner, id);
    if (!raw) throw uploadNotFound(id);
    const stored = this.#storedOf(raw, owner);
    if (stored.upload.status !== "pending" || this.#claimHeld(raw))
      throw notPending(stored.upload, this.#claimHeld(raw));
    return {
      raw,
      upload: raw.upload as UploadObject,
      received: stored.received,
      mimeType: stored.mimeType,
      fileId: String(raw.fileId),
      /** A stale claim (its complete crashed) or null: what conditional writes expect to find. */
      claim: typeof raw.claim === "string" ? raw.claim : null,
    } satisfies PendingItem;
  }

  #claimHeld(raw: RecordItem): boolean {
    if (typeof raw.claim !== "string") return false;
    return Number(raw.claim.split("#")[0]) + CLAIM_LEASE_MS > this.#now();
  }

  async #notPendingError(owner: ResourceOwner, id: string): Promise<HttpError> {
    const raw = await this.#item(owner, id);
    if (!raw) return uploadNotFound(id);
    return notPending(this.#storedOf(raw, owner).upload, this.#claimHeld(raw));
  }

  /** Raises `received` by `size` if the upload is still pending and the total stays within `bytes`. */
  async #reserve(owner: ResourceOwner, id: string, size: number): Promise<void> {
    for (;;) {
      const item = await this.#pendingItem(owner, id);
      if (item.received + size > item.upload.bytes) {
        throw badRequest(
          `This part would take the upload past its declared ${item.upload.bytes} bytes.`,
          "data",
          "upload_too_large",
        );
      }
      try {
        await this.#records.update(
          partition(owner),
          uploadKey(id),
          { set: { received: item.received + size } },
          { equals: { received: item.received, status: "pending", claim: item.claim } },
        );
        return;
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        // Another part (or a cancel, a complete) changed the upload since it was read: read again.
      }
    }
  }

  async #claim(owner: ResourceOwner, item: PendingItem, claim: string) {
    try {
      await this.#records.update(
        partition(owner),
        uploadKey(item.upload.id),
        { set: { claim } },
        { equals: { status: "pending", claim: item.claim } },
      );
    } catch (error) {
      if (error instanceof ConditionFailedError) throw await this.#notPendingError(owner, item.upload.id);
      throw error;
    }
  }

  async #release(owner: ResourceOwner, id: string, claim: string): Promise<void> {
    await this.#records.update(partition(owner), uploadKey(id), { remove: ["claim"] }, { equals: { claim } });
  }

  async #partsInOrder(owner: ResourceOwner, id: string, partIds: string[]) {
    if (partIds.length === 0) throw badRequest("part_ids must name at least one part.", "part_ids", "invalid_value");
    if (new Set(partIds).size !== partIds.length) {
      throw badRequest("part_ids names a part more than once.", "part_ids", "invalid_value");
    }
    const parts: Array<{ id: string; bytes: number; blobKey: string }> = [];
    for (const [index, partId] of partIds.entries()) {
      const item = PART_ID.test(partId)
        ? await this.#records.get(partition(owner), `${partPrefix(id)}${partId}`)
        : undefined;
      if (!item) {
        throw badRequest(`No part ${JSON.stringify(partId)} in upload ${id}.`, `part_ids[${index}]`, "invalid_value");
      }
      parts.push({ id: partId, bytes: Number(item.bytes), blobKey: String(item.blobKey) });
    }
    return parts;
  }

  async #deleteParts(owner: ResourceOwner, id: string): Promise<void> {
    let cursor: string | undefined;
    do {
      const page = await this.#records.query({
        partition: partition(owner),
        prefix: partPrefix(id),
        limit: 1000,
        cursor,
      });
      for (const item of page.items) {
        await this.#blobs.delete(String(item.blobKey)).catch(() => {});
        await this.#records.delete(item.pk, item.sk);
      }
      cursor = page.cursor;
    } while (cursor);
  }

  #storedOf(raw: RecordItem, owner: ResourceOwner): StoredUpload {
    const upload = { ...(raw.upload as UploadObject) };
    if (upload.status === "pending" && upload.expires_at * 1000 <= this.#now()) upload.status = "expired";
    return {
      upload,
      owner,
      mimeType: String(raw.mimeType),
      received: Number(raw.received ?? 0),
      ...(raw.deferred ? { deferred: raw.deferred as DeferredRequest } : {}),
    };
  }

  #partBlobKey(owner: ResourceOwner, id: string, partId: string): string {
    const workspace = owner.workspaceId || "_";
    return `uploads/${encodeURIComponent(owner.organisationId)}/${encodeURIComponent(workspace)}/${id}/${partId}`;
  }
}

export const uploadNotFound = (id: string) =>
  notFound(isUploadId(id) ? `No such Upload object: ${id}` : "No such Upload object.");

function notPending(upload: UploadObject, completing: boolean): HttpError {
  const state = completing ? "being completed" : upload.status;
  return badRequest(
    `Upload ${upload.id} is ${state}: it takes no more parts, completes or cancels.`,
    null,
    `upload_${upload.status}`,
  );
}

/**
 * Streams `body` into the blob, counting bytes: past `limit` the write fails (413 for a part past 64 MB, 400 for a
 * part past what the upload has left) and nothing is kept.
 */
async function writeCounted(
  blobs: Blobs,
  key: string,
  body: ReadableStream<Uint8Array>,
  limit: number,
  remaining: number,
): Promise<number> {
  return putWithinLimit(blobs, key, body, {
    limit,
    tooLarge: (size) =>
      limit < MAX_PART_BYTES && size > remaining
        ? badRequest("This part would take the upload past its declared bytes.", "data", "upload_too_large")
        : new HttpError(413, `A part is at most ${MAX_PART_BYTES} bytes.`, { code: "part_too_large" }),
    contentType: "application/octet-stream",
  });
}

/** The parts' blobs one after another as one stream (each opened when the previous ends), hashed as they pass. */
function concatenated(
  blobs: Blobs,
  parts: Array<{ id: string; blobKey: string }>,
  md5: ReturnType<typeof createHash>,
): ReadableStream<Uint8Array> {
  let index = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (!reader) {
            const part = parts[index];
            if (!part) {
              controller.close();
              return;
            }
            const blob = await blobs.get(part.blobKey);
            if (!blob) throw new HttpError(409, `The bytes of part ${part.id} are gone.`, { code: "part_missing" });
            reader = blob.body.getReader();
          }
          const next = await reader.read();
          if (next.done) {
            reader = undefined;
            index++;
            continue;
          }
          md5.update(next.value);
          controller.enqueue(next.value);
          return;
        }
      },
      async cancel(reason) {
        await reader?.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

const storesInUse = new WeakMap<object, UploadStore>();

/** The upload store of a process's stores (one per Stores object), writing its files through fileStoreOf's store. */
export function uploadStoreOf(services: Pick<Services, "stores" | "settings">): UploadStore {
  let store = storesInUse.get(services.stores);
  if (!store) {
    store = new UploadStore({
      records: services.stores.records,
      blobs: services.stores.blobs,
      files: fileStoreOf(services),
    });
    storesInUse.set(services.stores, store);
  }
  return store;
}
