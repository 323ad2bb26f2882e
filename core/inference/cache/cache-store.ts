import type { Blobs, Records } from "../../store/ports.ts";
import type { CacheScope } from "./cache-key.ts";

/**
 * Where cached answers live, on the existing ports (so both platforms have it, tested by one contract:
 * test/contract/cache-store.contract.ts): one Records item per key, holding the answer inline when small, else
 * a pointer to a blob. Every item names its organisation and workspace, checked on read as well as being
 * inside the key's hash. The item's `ttl` lets DynamoDB remove it; an entry past its expiry is a miss and is
 * deleted when read (dynalite and SQLite do not expire items by themselves).
 */

/** What a cache entry holds: an answer, and what it cost when the provider made it. */
export interface CachedAnswer {
  /**
   * `openai`: an OpenAI-shaped JSON answer (chat, completions, embeddings...), as JSON text; a streamed answer
   * is stored assembled, so it serves JSON and streams alike. `raw`: a pass-through answer as the provider sent it.
   */
  kind: "openai" | "raw";
  /** JSON text (`openai`) or the body's bytes in base64 (`raw`). */
  body: string;
  /** `raw` only: status and the headers worth replaying. */
  status?: number;
  headers?: Record<string, string>;
  provider?: string;
  model?: string;
  /** USD the answer cost when it was made: what each hit saves. */
  cost?: number;
}

export interface CacheEntry extends CachedAnswer {
  /** Unix ms. */
  createdAt: number;
  expiresAt: number;
}

export interface CacheStoreOptions {
  /** Larger entries are not stored (GATEWAY_CACHE_MAX_ENTRY_BYTES). */
  maxEntryBytes: number;
  /** Entries up to this size live in the Records item; larger ones in a blob. */
  inlineBytes?: number;
  now?: () => number;
}

/** Bodies up to this size stay in the item (DynamoDB items hold at most 400 KB). */
const DEFAULT_INLINE_BYTES = 64 * 1024;

const EXPIRED_GRACE_SECONDS = 24 * 3600;
const PARTITION = "CACHE#";
const SORT = "entry";
export const CACHE_BLOB_PREFIX = "cache/";

export class CacheStore {
  readonly #records: Records;
  readonly #blobs: Blobs;
  readonly #maxEntryBytes: number;
  readonly #inlineBytes: number;
  readonly #now: () => number;

  constructor(records: Records, blobs: Blobs, options: CacheStoreOptions) {
    this.#records = records;
    this.#blobs = blobs;
    this.#maxEntryBytes = options.maxEntryBytes;
    this.#inlineBytes = Math.min(options.inlineBytes ?? DEFAULT_INLINE_BYTES, options.maxEntryBytes);
    this.#now = options.now ?? Date.now;
  }

  /** Whether an answer body of this many characters may be stored. */
  fits(bodyChars: number): boolean {
    return bodyChars <= this.#maxEntryBytes;
  }

  /** The live entry under `key` for this scope, or undefined (an expired one is deleted). */
  async get(scope: CacheScope, key: string): Promise<CacheEntry | undefined> {
    const item = await this.#records.get(PARTITION + key, SORT);
    if (!item) return undefined;
    // The key's hash already holds the tenant; a mismatch here would be a collision: never served.
    if (item.org !== scope.organisationId || (item.ws ?? undefined) !== scope.workspaceId) return undefined;
    const expiresAt = item.expiresAt as number;
    if (expiresAt <= this.#now()) {
      await this.delete(key, item.blob as string | undefined).catch(() => {});
      return undefined;
    }
    let body = item.body as string | undefined;
    if (body === undefined && typeof item.blob === "string") {
      const blob = await this.#blobs.get(item.blob);
      if (!blob) return undefined;
      body = await new Response(blob.body).text();
    }
    if (body === undefined) return undefined;
    return {
      kind: item.kind as CachedAnswer["kind"],
      body,
      status: item.status as number | undefined,
      headers: item.headers as Record<string, string> | undefined,
      provider: item.provider as string | undefined,
      model: item.model as string | undefined,
      cost: item.cost as number | undefined,
      createdAt: item.createdAt as number,
      expiresAt,
    };
  }

  /** Stores an answer for `maxAgeSeconds`; false when it is larger than the cap (then nothing is stored). */
  async put(scope: CacheScope, key: string, answer: CachedAnswer, maxAgeSeconds: number): Promise<boolean> {
    const size = Buffer.byteLength(answer.body);
    if (size > this.#maxEntryBytes) return false;
    const createdAt = this.#now();
    const expiresAt = createdAt + maxAgeSeconds * 1000;
    const item: Record<string, unknown> = {
      pk: PARTITION + key,
      sk: SORT,
      // DynamoDB removes the item by itself some time after this (Unix seconds). A day later than the entry's
      // expiry, so that a read in between still sees the expired item and deletes it (with its blob).
      ttl: Math.ceil(expiresAt / 1000) + EXPIRED_GRACE_SECONDS,
      org: scope.organisationId,
      ws: scope.workspaceId,
      kind: answer.kind,
      status: answer.status,
      headers: answer.headers,
      provider: answer.provider,
      model: answer.model,
      cost: answer.cost,
      createdAt,
      expiresAt,
    };
    for (const name of Object.keys(item)) if (item[name] === undefined) delete item[name];
    if (size <= this.#inlineBytes) item.body = answer.body;
    else {
      item.blob = `${CACHE_BLOB_PREFIX}${key}`;
      await this.#blobs.put(item.blob as string, answer.body, { contentType: "application/octet-stream" });
    }
    await this.#records.put(item as { pk: string; sk: string });
    return true;
  }

  async delete(key: string, blob?: string): Promise<void> {
    await this.#records.delete(PARTITION + key, SORT);
    if (blob) await this.#blobs.delete(blob);
  }
}
