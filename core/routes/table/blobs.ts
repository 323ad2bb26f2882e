import type { RouteFamily } from "../../http/route-types.ts";

/**
 * Signed blob downloads where the gateway serves them itself (local folder blobs); the signature is the credential.
 */
export const family: RouteFamily = {
  name: "blobs",
  dataPlane: false,
  timeoutSeconds: 300,
  routes: [{ method: "GET", path: "/_blobs/*", handler: "download", auth: "none" }],
};
