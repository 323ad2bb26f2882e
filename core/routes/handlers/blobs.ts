import type { HandlerMap } from "../../http/context.ts";
import { HttpError, notFound } from "../../http/errors.ts";

/**
 * Downloads through signed blob URLs on platforms whose Blobs adapter the gateway serves itself (the local
 * folder; S3's presigned URLs never reach the gateway). No API key: the URL's signature is the credential,
 * checked by the adapter (key, file name and expiry); keys that could leave the blob folder are refused.
 */
export const handlers: HandlerMap = {
  async download(request, ctx) {
    const blobs = ctx.services.stores.blobs;
    if (!blobs.verifySignedUrl) throw notFound("Signed blob URLs are served by the storage service on this platform.");
    const grant = blobs.verifySignedUrl(new URL(request.url));
    if (!grant) throw new HttpError(403, "The download link is invalid or has expired.", { code: "invalid_signature" });
    const blob = await blobs.get(grant.key);
    if (!blob) throw notFound("The file no longer exists.");
    const headers: Record<string, string> = {
      "content-type": blob.contentType ?? "application/octet-stream",
      "content-length": String(blob.size),
      "cache-control": "private, no-store",
      "x-content-type-options": "nosniff",
    };
    if (grant.filename !== undefined)
      headers["content-disposition"] = `attachment; filename="${grant.filename.replace(/["\\\r\n]/g, "_")}"`;
    return new Response(blob.body, { headers });
  },
};
