/**
 * CORS for the routes marked `cors` (core/http/route-types.ts). Their callers send credentials in headers
 * they set themselves (a bearer token, a gateway key), never cookies, so any origin may call them and read the
 * answer: what a page can do there, it can do only with a credential it already holds.
 */

const ALLOWED_HEADERS = [
  "authorization",
  "content-type",
  "accept",
  "last-event-id",
  "mcp-protocol-version",
  "mcp-session-id",
  "x-gateway-api-key",
  "x-portkey-api-key",
  "x-gateway-trace-id",
].join(", ");

/** Headers of an answer that a cross-origin page may read besides the simple ones (MCP and OAuth clients need these). */
const EXPOSED_HEADERS = ["www-authenticate", "mcp-session-id", "mcp-protocol-version", "x-gateway-trace-id"].join(", ");

/** The answer to a browser's preflight for a path whose `cors` routes accept `methods`. */
export function corsPreflight(methods: string[]): Response {
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": "*",
      "access-control-allow-methods": [...new Set(methods)].join(", "),
      "access-control-allow-headers": ALLOWED_HEADERS,
      "access-control-max-age": "600",
    },
  });
}

/** Headers that make a `cors` route's answer readable by pages of any origin. */
export const CORS_ANSWER_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "access-control-allow-origin": "*",
  "access-control-expose-headers": EXPOSED_HEADERS,
});
