import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { checkBlobKey } from "../../store/blob-keys.ts";
import { attachmentDisposition } from "../../store/content-disposition.ts";
import type { BlobBody, BlobInfo, Blobs, Page } from "../../store/ports.ts";
import { pageSize } from "../../store/record-rules.ts";
import { aws } from "./errors.ts";

/** Multipart part size for streamed bodies: S3 needs >= 5 MiB per part but the last. */
const PART_BYTES = 8 * 1024 * 1024;
const MAX_LIST = 1000;

/** Blobs in one S3 bucket. Streams of unknown length are uploaded in parts, so they are never fully buffered. */
export class S3Blobs implements Blobs {
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(client: S3Client, bucketName: string) {
    this.#client = client;
    this.#bucket = bucketName;
  }

  async put(key: string, body: BlobBody, options: { contentType?: string } = {}): Promise<{ size: number }> {
    checkBlobKey(key);
    if (typeof body === "string" || body instanceof Uint8Array) {
      const bytes = typeof body === "string" ? Buffer.from(body) : body;
      await this.#putObject(key, bytes, options.contentType);
      return { size: bytes.byteLength };
    }
    const parts = readParts(body, PART_BYTES);
    const first = await parts.next();
    // A stream that fits in one part is one PutObject; only longer ones pay for a multipart upload.
    if (first.done || first.value.byteLength < PART_BYTES) {
      const bytes = first.done ? Buffer.alloc(0) : first.value;
      await this.#putObject(key, bytes, options.contentType);
      return { size: bytes.byteLength };
    }
    return this.#putMultipart(key, first.value, parts, options.contentType);
  }

  async get(key: string): Promise<(BlobInfo & { body: ReadableStream<Uint8Array> }) | undefined> {
    checkBlobKey(key);
    try {
      const out = await aws("blobs.get", () =>
        this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key })),
      );
      return {
        key,
        size: out.ContentLength ?? 0,
        contentType: out.ContentType,
        lastModified: out.LastModified ?? new Date(0),
        body: out.Body!.transformToWebStream() as ReadableStream<Uint8Array>,
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async head(key: string): Promise<BlobInfo | undefined> {
    checkBlobKey(key);
    try {
      const out = await aws("blobs.head", () =>
        this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: key })),
      );
      return {
        key,
        size: out.ContentLength ?? 0,
        contentType: out.ContentType,
        lastModified: out.LastModified ?? new Date(0),
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async list(prefix: string, options: { limit?: number; cursor?: string } = {}): Promise<Page<BlobInfo>> {
    const limit = pageSize(options.limit, MAX_LIST, MAX_LIST);
    const out = await aws("blobs.list", () =>
      this.#client.send(
        new ListObjectsV2Command({
          Bucket: this.#bucket,
          Prefix: prefix,
          MaxKeys: limit,
          ContinuationToken: options.cursor,
        }),
      ),
    );
    return {
      items: (out.Contents ?? []).map((object) => ({
        key: object.Key!,
        size: object.Size ?? 0,
        lastModified: object.LastModified ?? new Date(0),
      })),
      cursor: out.IsTruncated ? out.NextContinuationToken : undefined,
    };
  }

  async delete(key: string): Promise<void> {
    checkBlobKey(key);
    await aws("blobs.delete", () => this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key })));
  }

  async signedUrl(key: string, options: { expiresInSeconds: number; filename?: string }): Promise<string> {
    checkBlobKey(key);
    const command = new GetObjectCommand({
      Bucket: this.#bucket,
      Key: key,
      ResponseContentDisposition: options.filename === undefined ? undefined : attachmentDisposition(options.filename),
    });
    // Presigning is local computation (no request), so there is no fault to map.
    return getSignedUrl(this.#client, command, { expiresIn: Math.ceil(options.expiresInSeconds) });
  }

  async #putObject(key: string, body: Uint8Array, contentType: string | undefined): Promise<void> {
    await aws("blobs.put", () =>
      this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: body, ContentType: contentType })),
    );
  }

  async #putMultipart(
    key: string,
    first: Buffer,
    rest: AsyncGenerator<Buffer>,
    contentType: string | undefined,
  ): Promise<{ size: number }> {
    const { UploadId } = await aws("blobs.put", () =>
      this.#client.send(new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: key, ContentType: contentType })),
    );
    const upload = { Bucket: this.#bucket, Key: key, UploadId };
    try {
      const parts: { ETag?: string; PartNumber: number }[] = [];
      let size = 0;
      let part: Buffer | undefined = first;
      while (part) {
        const PartNumber = parts.length + 1;
        const bytes: Buffer = part;
        const { ETag } = await aws("blobs.put", () =>
          this.#client.send(new UploadPartCommand({ ...upload, PartNumber, Body: bytes })),
        );
        parts.push({ ETag, PartNumber });
        size += bytes.byteLength;
        const next = await rest.next();
        part = next.done ? undefined : next.value;
      }
      await aws("blobs.put", () =>
        this.#client.send(new CompleteMultipartUploadCommand({ ...upload, MultipartUpload: { Parts: parts } })),
      );
      return { size };
    } catch (error) {
      // Parts of an abandoned upload are billed until aborted.
      await this.#client.send(new AbortMultipartUploadCommand(upload)).catch(() => {});
      throw error;
    }
  }
}

/** Cuts a stream into `size`-byte buffers; the last one may be shorter (and is absent for an empty stream). */
async function* readParts(stream: ReadableStream<Uint8Array>, size: number): AsyncGenerator<Buffer> {
  const reader = stream.getReader();
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      pendingBytes += value.byteLength;
      while (pendingBytes >= size) {
        const all = Buffer.concat(pending);
        yield all.subarray(0, size);
        pending = [all.subarray(size)];
        pendingBytes -= size;
      }
    }
    if (pendingBytes > 0) yield Buffer.concat(pending);
  } finally {
    reader.releaseLock();
  }
}

/** GetObject says NoSuchKey; HeadObject has no body, so the SDK can only call it NotFound. */
const isNotFound = (error: unknown) => {
  const name = (error as { name?: string })?.name;
  return name === "NoSuchKey" || name === "NotFound";
};
