import type { RouteFamily } from "../../http/route-types.ts";

/**
 * OAuth 2.1 for MCP clients (core/features/mcp/oauth; docs/mcp-oauth.md): discovery, registration, authorize pages,
 * tokens, introspection, revocation; per-user OAuth to upstream MCP servers. Public routes: each endpoint
 * authenticates its caller the OAuth way (client credentials, a session or API key at sign-in).
 */
export const family: RouteFamily = {
  name: "oauth",
  dataPlane: false,
  timeoutSeconds: 30,
  routes: [
    {
      method: "GET",
      path: "/.well-known/oauth-authorization-server",
      handler: "authorizationServerMetadata",
      auth: "none",
      cors: true,
    },
    {
      method: "GET",
      path: "/.well-known/oauth-protected-resource",
      handler: "protectedResourceMetadata",
      auth: "none",
      cors: true,
    },
    {
      method: "GET",
      path: "/.well-known/oauth-protected-resource/mcp/:server",
      handler: "protectedResourceMetadata",
      auth: "none",
      cors: true,
    },
    { method: "POST", path: "/oauth/register", handler: "registerClient", auth: "none", body: "json", cors: true },
    { method: "GET", path: "/oauth/authorize", handler: "authorize", auth: "none" },
    { method: "POST", path: "/oauth/authorize/sign-in", handler: "authorizeSignIn", auth: "none" },
    { method: "POST", path: "/oauth/authorize/consent", handler: "authorizeConsent", auth: "none" },
    { method: "POST", path: "/oauth/token", handler: "token", auth: "none", cors: true },
    { method: "POST", path: "/oauth/introspect", handler: "introspect", auth: "none" },
    { method: "POST", path: "/oauth/revoke", handler: "revoke", auth: "none", cors: true },
    { method: "GET", path: "/oauth/upstream/:server/connect", handler: "upstreamConnect", auth: "none" },
    { method: "GET", path: "/oauth/upstream/callback", handler: "upstreamCallback", auth: "none" },
  ],
};
