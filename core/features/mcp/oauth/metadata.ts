/**
 * Discovery documents: the gateway's authorization-server metadata (RFC 8414) and each MCP server's
 * protected-resource metadata (RFC 9728), as the MCP authorization spec asks clients to find them.
 */

/** The one scope the gateway's tokens carry: use MCP servers with the rights of the identity that signed in. */
export const OAUTH_SCOPES = ["mcp"] as const;
export const DEFAULT_SCOPE = "mcp";

export const CLIENT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"] as const;
export type ClientAuthMethod = (typeof CLIENT_AUTH_METHODS)[number];

export const oauthEndpoints = (base: string) => ({
  authorization_endpoint: `${base}/oauth/authorize`,
  token_endpoint: `${base}/oauth/token`,
  registration_endpoint: `${base}/oauth/register`,
  introspection_endpoint: `${base}/oauth/introspect`,
  revocation_endpoint: `${base}/oauth/revoke`,
});

export function authorizationServerMetadata(base: string) {
  return {
    issuer: base,
    ...oauthEndpoints(base),
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    scopes_supported: [...OAUTH_SCOPES],
    // RFC 9207: the issuer comes back with the code, so a client can tell which server answered.
    authorization_response_iss_parameter_supported: true,
  };
}

export function protectedResourceMetadata(base: string, resource: string, name?: string) {
  return {
    resource,
    authorization_servers: [base],
    bearer_methods_supported: ["header"],
    scopes_supported: [...OAUTH_SCOPES],
    ...(name ? { resource_name: name } : {}),
  };
}
