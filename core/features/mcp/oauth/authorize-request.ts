import type { Records } from "../../../store/ports.ts";
import { type OAuthClient, findClient } from "./clients.ts";
import { DEFAULT_SCOPE, OAUTH_SCOPES } from "./metadata.ts";
import type { AuthorizationRequest } from "./pending-requests.ts";
import { isS256Challenge } from "./pkce.ts";
import { type ResourceTarget, resolveResource } from "./resources.ts";

/**
 * Checks the query of `GET /oauth/authorize` (OAuth 2.1 section 4.1.1). Until the client and its redirect_uri
 * are known good, errors are shown to the user as a page (never redirected: that would make the gateway an open
 * redirector); after that, they go back to the client at its redirect_uri (section 4.1.2.1).
 */

export type AuthorizeCheck =
  | { kind: "page"; message: string }
  | { kind: "redirect"; url: string }
  | {
      kind: "ok";
      client: OAuthClient;
      target?: ResourceTarget;
      request: Omit<AuthorizationRequest, "csrfHash">;
    };

const SINGLE_VALUED = [
  "client_id",
  "redirect_uri",
  "response_type",
  "code_challenge",
  "code_challenge_method",
  "scope",
  "state",
  "resource",
];

/** The client's redirect_uri with an authorization response (or error) added, and the issuer (RFC 9207). */
export function redirectWith(redirectUri: string, issuer: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  url.searchParams.set("iss", issuer);
  return url.href;
}

export async function checkAuthorizeQuery(
  records: Records,
  issuer: string,
  query: URLSearchParams,
): Promise<AuthorizeCheck> {
  const clientId = query.get("client_id");
  if (!clientId || query.getAll("client_id").length > 1)
    return { kind: "page", message: "The request names no client." };
  const client = await findClient(records, clientId);
  if (!client) return { kind: "page", message: "The client is unknown (or its registration has expired)." };
  const given = query.getAll("redirect_uri");
  if (given.length > 1) return { kind: "page", message: "The request repeats redirect_uri." };
  let redirectUri = given[0];
  if (redirectUri === undefined) {
    if (client.redirect_uris.length !== 1) return { kind: "page", message: "The request names no redirect_uri." };
    redirectUri = client.redirect_uris[0]!;
  }
  // Exact match against the registration: no prefix, no normalisation.
  if (!client.redirect_uris.includes(redirectUri)) {
    return { kind: "page", message: "The redirect_uri is not one the client registered." };
  }
  const state = query.get("state") ?? undefined;
  const fail = (error: string, description: string): AuthorizeCheck => ({
    kind: "redirect",
    url: redirectWith(redirectUri, issuer, { error, error_description: description, state }),
  });
  for (const name of SINGLE_VALUED) {
    if (query.getAll(name).length > 1) return fail("invalid_request", `'${name}' is repeated.`);
  }
  if (query.get("response_type") !== "code") return fail("unsupported_response_type", "response_type must be 'code'.");
  const challenge = query.get("code_challenge");
  if (!challenge) return fail("invalid_request", "PKCE is required: send code_challenge (S256).");
  if (query.get("code_challenge_method") !== "S256") {
    return fail("invalid_request", "code_challenge_method must be 'S256'.");
  }
  if (!isS256Challenge(challenge)) return fail("invalid_request", "code_challenge is not an S256 challenge.");
  if (state !== undefined && state.length > 1000) return fail("invalid_request", "state is too long.");
  const requestedScope = (query.get("scope") ?? "").split(" ").filter(Boolean);
  if (requestedScope.some((scope) => !(OAUTH_SCOPES as readonly string[]).includes(scope))) {
    return fail("invalid_scope", `Supported scopes: ${OAUTH_SCOPES.join(" ")}.`);
  }
  const scope = requestedScope.length > 0 ? [...new Set(requestedScope)].join(" ") : DEFAULT_SCOPE;
  const resource = query.get("resource") ?? undefined;
  let target: ResourceTarget | undefined;
  if (resource !== undefined) {
    target = resource.length <= 2000 ? await resolveResource(records, issuer, resource) : undefined;
    if (!target) return fail("invalid_target", "resource is not an MCP server of this gateway.");
  }
  const server = target?.kind === "server" ? target.server : undefined;
  return {
    kind: "ok",
    client,
    target,
    request: {
      clientId: client.client_id,
      clientName: client.client_name,
      redirectUri,
      codeChallenge: challenge,
      scope,
      state,
      // A grant for the gateway's base URL has no audience: it holds at every MCP server its identity reaches.
      resource: server ? resource : undefined,
      serverId: server?.id,
      serverName: server?.name,
    },
  };
}
