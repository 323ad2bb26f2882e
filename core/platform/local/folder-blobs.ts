import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { createWriteStream, type Dirent } from "node:fs";
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { checkBlobKey } from "../../store/blob-keys.ts";
import { decodeCursor, encodeCursor } from "../../store/cursor.ts";
import { pageSize } from "../../store/record-rules.ts";
import { type BlobBody, type BlobInfo, type Blobs, type Page, StoreUnavailableError } from "../../store/ports.ts";

const MAX_LIST = 1000;
/**
 * S3 lets `a` and `a/b` both exist, which a plain folder cannot (`a` would be a file and a folder). So each
 * folder segment ends in `.d`, each blob in `.f`, and its metadata in `.m`: names can never clash.
 */
const DIR = ".d";
const FILE = ".f";
const META = ".m";
/** Scratch folder for atomic writes; it cannot clash with a key either, as it has none of the suffixes. */
const TMP = ".tmp";

export interface FolderBlobsOptions {
  /** The folder that holds the blobs. */
  root: string;
  /** Base URL of the local server, for signed URLs (`${publicBaseUrl}/_blobs/...`). */
  publicBaseUrl: string | (() => string);
  /** HMAC key for signed URLs. */
  signingKey: Uint8Array;
}

interface BlobMeta {
  contentType?: string;
}

/** Blobs as files under one folder. Keys may contain `/` (sub-folders) but can never leave the folder. */
export class FolderBlobs implements Blobs {
  readonly #root: string;
  readonly #publicBaseUrl: () => string;
  readonly #signingKey: Buffer;

  constructor(options: FolderBlobsOptions) {
    this.#root = resolve(options.root);
    const base = options.publicBaseUrl;
    // A function when the server's address is only known after it listens (PORT=0).
    this.#publicBaseUrl = () => (typeof base === "function" ? base() : base).replace(/\/+$/, "");
    this.#signingKey = Buffer.from(options.signingKey);
  }

  async put(key: string, body: BlobBody, options: { contentType?: string } = {}): Promise<{ size: number }> {
    const { file, meta } = this.#paths(key);
    return fs("blobs.put", async () => {
      const tmpDir = join(this.#root, TMP);
      await mkdir(tmpDir, { recursive: true });
      const tmp = join(tmpDir, randomUUID());
      try {
        if (typeof body === "string" || body instanceof Uint8Array) await writeFile(tmp, body);
        else await pipeline(Readable.fromWeb(body as NodeReadableStream<Uint8Array>), createWriteStream(tmp));
        const { size } = await stat(tmp);
        await mkdir(join(file, ".."), { recursive: true });
        // Write the metadata first so a reader never sees the new body with a stale content type for long.
        if (options.contentType) await writeFile(meta, JSON.stringify({ contentType: options.contentType }));
        else await rm(meta, { force: true });
        // rename is atomic: readers see the old blob or the new one, never half of it.
        await rename(tmp, file);
        return { size };
      } finally {
        await rm(tmp, { force: true });
      }
    });
  }

  async get(key: string): Promise<(BlobInfo & { body: ReadableStream<Uint8Array> }) | undefined> {
    const { file, meta } = this.#paths(key);
    return fs("blobs.get", async () => {
      let handle: FileHandle;
      try {
        handle = await open(file, "r");
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
      try {
        // Stat the open handle: the info then describes exactly the bytes the stream will read.
        const info = await handle.stat();
        const { contentType } = await readMeta(meta);
        const body = Readable.toWeb(handle.createReadStream()) as unknown as ReadableStream<Uint8Array>;
        return { key, size: info.size, contentType, lastModified: info.mtime, body };
      } catch (error) {
        await handle.close();
        throw error;
      }
    });
  }

  async head(key: string): Promise<BlobInfo | undefined> {
    const { file, meta } = this.#paths(key);
    return fs("blobs.head", async () => {
      try {
        const info = await stat(file);
        const { contentType } = await readMeta(meta);
        return { key, size: info.size, contentType, lastModified: info.mtime };
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    });
  }

  async list(prefix: string, options: { limit?: number; cursor?: string } = {}): Promise<Page<BlobInfo>> {
    const limit = pageSize(options.limit, MAX_LIST, MAX_LIST);
    const after = options.cursor === undefined ? undefined : decodeCursor<string[]>(options.cursor)[0];
    // Only the folder of the prefix's complete segments can hold matching keys.
    const segments = prefix.split("/");
    segments.pop();
    const folder = join(this.#root, ...segments.map((segment) => segment + DIR));
    const base = segments.length > 0 ? `${segments.join("/")}/` : "";
    return fs("blobs.list", async () => {
      const found: BlobInfo[] = [];
      await this.#walk(folder, base, prefix, after, found);
      found.sort((a, b) => compareKeys(a.key, b.key));
      const items = found.slice(0, limit);
      const cursor = found.length > limit ? encodeCursor([items.at(-1)!.key]) : undefined;
      return { items, cursor };
    });
  }

  async delete(key: string): Promise<void> {
    const { file, meta } = this.#paths(key);
    await fs("blobs.delete", async () => {
      await rm(file, { force: true });
      await rm(meta, { force: true });
    });
  }

  async signedUrl(key: string, options: { expiresInSeconds: number; filename?: string }): Promise<string> {
    this.#paths(key);
    const expires = Math.floor(Date.now() / 1000) + Math.ceil(options.expiresInSeconds);
    const query = new URLSearchParams({
      expires: String(expires),
      signature: this.#sign(key, expires, options.filename),
    });
    if (options.filename !== undefined) query.set("filename", options.filename);
    const path = key.split("/").map(encodeURIComponent).join("/");
    return `${this.#publicBaseUrl()}/_blobs/${path}?${query}`;
  }

  /**
   * For the local server answering `/_blobs/<key>`: true when the signature was made by signedUrl for this
   * key (and filename, which the server then sends as Content-Disposition) and has not expired.
   */
  verifyBlobSignature(key: string, expires: string | number, signature: string, filename?: string): boolean {
    const expiresAt = Number(expires);
    if (!Number.isInteger(expiresAt) || expiresAt < Date.now() / 1000) return false;
    const expected = Buffer.from(this.#sign(key, expiresAt, filename), "hex");
    const given = Buffer.from(signature, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** The Blobs port's check of a URL made by signedUrl (served by the `blobs` route family). */
  verifySignedUrl(url: URL): { key: string; filename?: string } | undefined {
    const prefix = "/_blobs/";
    if (!url.pathname.startsWith(prefix)) return undefined;
    let key: string;
    try {
      key = url.pathname.slice(prefix.length).split("/").map(decodeURIComponent).join("/");
      checkBlobKey(key);
    } catch {
      return undefined;
    }
    const expires = url.searchParams.get("expires");
    const signature = url.searchParams.get("signature");
    const filename = url.searchParams.get("filename") ?? undefined;
    if (!expires || !signature || !/^[0-9a-f]{64}$/.test(signature)) return undefined;
    return this.verifyBlobSignature(key, expires, signature, filename) ? { key, filename } : undefined;
  }

  #sign(key: string, expires: number, filename: string | undefined): string {
    return createHmac("sha256", this.#signingKey)
      .update(`${key}\n${expires}\n${filename ?? ""}`)
      .digest("hex");
  }

  /** Where a key lives. Rejects keys that are empty, absolute, or walk out with `..`. */
  #paths(key: string): { file: string; meta: string } {
    checkBlobKey(key);
    const segments = key.split("/");
    const last = segments.pop()!;
    const folder = join(this.#root, ...segments.map((segment) => segment + DIR));
    const file = join(folder, last + FILE);
    // Defence in depth: checkBlobKey and the suffixes already make leaving the folder impossible.
    if (!file.startsWith(this.#root + sep)) throw new RangeError(`invalid blob key: ${key}`);
    return { file, meta: join(folder, last + META) };
  }

  async #walk(folder: string, base: string, prefix: string, after: string | undefined, found: BlobInfo[]) {
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && entry.name.endsWith(DIR)) {
        const child = `${base}${entry.name.slice(0, -DIR.length)}/`;
        // Descend only where keys can still match the prefix.
        if (child.startsWith(prefix) || prefix.startsWith(child)) {
          await this.#walk(join(folder, entry.name), child, prefix, after, found);
        }
      } else if (entry.isFile() && entry.name.endsWith(FILE)) {
        const key = base + entry.name.slice(0, -FILE.length);
        if (!key.startsWith(prefix) || (after !== undefined && compareKeys(key, after) <= 0)) continue;
        try {
          const info = await stat(join(folder, entry.name));
          found.push({ key, size: info.size, lastModified: info.mtime });
        } catch (error) {
          if (!isNotFound(error)) throw error; // deleted while listing
        }
      }
    }
  }
}

/** S3 orders keys by their UTF-8 bytes, which differs from JS string order for some characters. */
const compareKeys = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function readMeta(file: string): Promise<BlobMeta> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as BlobMeta;
  } catch (error) {
    if (isNotFound(error)) return {};
    throw error;
  }
}

const isNotFound = (error: unknown) => (error as { code?: unknown })?.code === "ENOENT";

/** File-system faults that are the machine's state, not the request's: answered as 503. */
const UNAVAILABLE_CODES = new Set(["EMFILE", "ENFILE", "ENOSPC", "EIO", "EBUSY", "EAGAIN", "EACCES", "EPERM", "EROFS"]);

async function fs<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) {
      throw new StoreUnavailableError(`${what}: ${code}`, { cause: error });
    }
    throw error;
  }
}
