import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Files (spec 2.7; core/features/files): bytes in Blobs, metadata in Records, scoped to the caller's workspace; copied to
 * the provider the upload names, so a native batch or fine-tune can use them there.
 */
export const family: RouteFamily = {
  name: "files",
  dataPlane: true,
  timeoutSeconds: 900,
  routes: [
    { method: "POST", path: "/v1/files", handler: "uploadFile", auth: "api_key", body: "upload" },
    { method: "GET", path: "/v1/files", handler: "listFiles", auth: "api_key" },
    { method: "GET", path: "/v1/files/:id", handler: "getFile", auth: "api_key" },
    { method: "GET", path: "/v1/files/:id/content", handler: "fileContent", auth: "api_key" },
    { method: "DELETE", path: "/v1/files/:id", handler: "deleteFile", auth: "api_key" },
    // OpenAI's Uploads API (core/features/files/uploads.ts): a file in parts of at most 64 MB, each its own request.
    { method: "POST", path: "/v1/uploads", handler: "createUpload", auth: "api_key", body: "json" },
    { method: "POST", path: "/v1/uploads/:id/parts", handler: "addUploadPart", auth: "api_key", body: "upload" },
    { method: "POST", path: "/v1/uploads/:id/complete", handler: "completeUpload", auth: "api_key", body: "json" },
    { method: "POST", path: "/v1/uploads/:id/cancel", handler: "cancelUpload", auth: "api_key" },
  ],
};
