import { S3Client } from "@aws-sdk/client-s3";
import type { Blobs } from "../../store/ports.ts";
import { S3Blobs } from "./s3-blobs.ts";

export interface S3CompatibleOptions {
  bucket: string;
  /** The store's API endpoint (MinIO, SeaweedFS, Ceph, R2...); none: AWS S3 itself. */
  endpoint?: string;
  /**
   * The endpoint clients reach the store at, when it differs from `endpoint` (a store on a private network
   * behind a public name): download links are signed for it. Signing is local, so nothing calls it.
   */
  publicEndpoint?: string;
  region: string;
  /** Bucket in the path (most self-hosted stores) rather than in the host name. */
  forcePathStyle: boolean;
  /** Keys to sign with; none: the SDK's usual sources. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/**
 * Blobs on any S3-compatible store, for platforms other than AWS (core/platform/mysql): the S3 adapter with an
 * endpoint and path-style addressing. Credentials come from the SDK's usual sources (AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, a profile, a role).
 */
export function s3CompatibleBlobs(options: S3CompatibleOptions): { blobs: Blobs; close(): void } {
  const client = (endpoint: string | undefined) =>
    new S3Client({
      region: options.region,
      endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
    });
  const api = client(options.endpoint);
  const store = new S3Blobs(api, options.bucket);
  if (!options.publicEndpoint) return { blobs: store, close: () => api.destroy() };
  const signer = client(options.publicEndpoint);
  const links = new S3Blobs(signer, options.bucket);
  const blobs: Blobs = {
    put: (key, body, putOptions) => store.put(key, body, putOptions),
    get: (key) => store.get(key),
    head: (key) => store.head(key),
    list: (prefix, listOptions) => store.list(prefix, listOptions),
    delete: (key) => store.delete(key),
    signedUrl: (key, urlOptions) => links.signedUrl(key, urlOptions),
  };
  return {
    blobs,
    close() {
      api.destroy();
      signer.destroy();
    },
  };
}
