import { createHash } from "node:crypto";

/**
 * A file part of a multipart inference request (an image to edit, audio to transcribe), held in memory: a
 * retry or a fallback sends it again, so it must outlive one upstream call. Logs and cache keys see its name,
 * type, size and hash (toJSON), never its bytes.
 */
export class UploadedFile {
  readonly filename: string;
  readonly contentType: string;
  readonly bytes: Uint8Array;
  #sha256: string | undefined;
  constructor(filename: string, contentType: string, bytes: Uint8Array) {
    this.filename = filename;
    this.contentType = contentType;
    this.bytes = bytes;
  }

  get size(): number {
    return this.bytes.byteLength;
  }

  /** Hex SHA-256 of the bytes, computed once (the cache key and the log use it). */
  get sha256(): string {
    this.#sha256 ??= createHash("sha256").update(this.bytes).digest("hex");
    return this.#sha256;
  }

  /** The bytes as a Blob for a FormData sent upstream. */
  blob(): Blob {
    return new Blob([this.bytes as Uint8Array<ArrayBuffer>], { type: this.contentType });
  }

  base64(): string {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString("base64");
  }

  toJSON(): { filename: string; content_type: string; bytes: number; sha256: string } {
    return { filename: this.filename, content_type: this.contentType, bytes: this.size, sha256: this.sha256 };
  }
}

export function isUploadedFile(value: unknown): value is UploadedFile {
  return value instanceof UploadedFile;
}
