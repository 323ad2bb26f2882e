import type { ResourceOwner } from "../../auth/resource-owner.ts";

/**
 * Files (spec 2.7, OpenAI's Files API): bytes in Blobs, streamed in and out (never held whole in memory),
 * metadata in Records, scoped to the owner's workspace. The store is `core/features/files/file-store.ts`.
 */

export const FILE_PURPOSES = [
  "assistants",
  "assistants_output",
  "batch",
  "batch_output",
  "fine-tune",
  "fine-tune-results",
  "vision",
  "user_data",
  "evals",
] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** Purposes a client may upload (the others are written by the gateway: batch and fine-tune results). */
export const UPLOADABLE_PURPOSES: readonly FilePurpose[] = [
  "assistants",
  "batch",
  "fine-tune",
  "vision",
  "user_data",
  "evals",
];

/** The File object of spec 2.7, as clients see it. */
export interface FileObject {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  /** Unix seconds, or null when the file does not expire. */
  expires_at: number | null;
  filename: string;
  purpose: FilePurpose;
  /** Deprecated by OpenAI, still sent: `uploaded`, `processed` or `error`. */
  status: "uploaded" | "processed" | "error";
  status_details: string | null;
}

/** What the gateway keeps about a file besides the File object. */
export interface StoredFile {
  file: FileObject;
  owner: ResourceOwner;
  /** Blobs key of the bytes. */
  blobKey: string;
  contentType: string;
  /**
   * Copies of the file at providers, by provider key (core/providers/account-key.ts: the provider id and a hash of the
   * account, e.g. `openai:Xk3...`), made when the upload named a provider or when a native batch / fine-tune needed
   * one (core/features/files/provider-files.ts ensureProviderFile): the provider's file id.
   */
  providerFiles: Record<string, string>;
}

export interface NewFile {
  filename: string;
  purpose: FilePurpose;
  contentType?: string;
  body: ReadableStream<Uint8Array> | Uint8Array | string;
  /** Refuse (413) a body larger than this while streaming it (default: GATEWAY_MAX_UPLOAD_BYTES). */
  maxBytes?: number;
  /** Seconds until the file expires (`expires_after`), else none. */
  expiresInSeconds?: number;
  /**
   * A fixed id (the gateway's own output files, e.g. `file-batch-<batch id>-output`): writing again replaces the
   * file, so a finalisation that runs twice leaves one file. Clients' uploads always get a new id.
   */
  id?: string;
}

export interface FileListQuery {
  purpose?: FilePurpose;
  /** 1..10000, default 10000 (OpenAI's files list). */
  limit: number;
  /** A file id: list the files after it in `order`. */
  after?: string;
  order: "asc" | "desc";
}

export interface FileStore {
  create(owner: ResourceOwner, file: NewFile): Promise<StoredFile>;
  /** Undefined when absent, expired or owned by another workspace. */
  get(owner: ResourceOwner, id: string): Promise<StoredFile | undefined>;
  list(owner: ResourceOwner, query: FileListQuery): Promise<{ items: StoredFile[]; hasMore: boolean }>;
  /** The bytes as a stream, or undefined when the file is absent. */
  content(
    owner: ResourceOwner,
    id: string,
  ): Promise<{ file: StoredFile; body: ReadableStream<Uint8Array> } | undefined>;
  /** False when the file was absent. Deletes the gateway's copy only (provider copies are left; see the note). */
  delete(owner: ResourceOwner, id: string): Promise<boolean>;
  /** Records that `providerKey` holds a copy of the file under `providerFileId`. */
  linkProviderFile(owner: ResourceOwner, id: string, providerKey: string, providerFileId: string): Promise<void>;
}
