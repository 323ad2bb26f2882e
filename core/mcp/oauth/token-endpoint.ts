import type { Settings } from "../../config/settings.ts";
import type { Records } from "../../store/ports.ts";
import { type OAuthClient, authenticateClient, extendClient, presentedClient } from "./clients.ts";
import { claimCode } from "./codes.ts";
import { currentPrincipal } from "./grant-subject.ts";
import { OAuthError } from "./oauth-errors.ts";
import { verifyPkce } from "./pkce.ts";
import {
  FamilyRevoked,
  type IssuedTokens,
  type TokenGrant,
  claimRefreshToken,
  issueTokens,
  revokeFamily,
} from "./tokens.ts";

/**
 * `POST /oauth/token` (OAuth 2.1 section 3.2): the authorization_code grant (single-use codes, PKCE S256, the
 * same client and redirect_uri as the authorize request) and the refresh_token grant (rotation: each refresh
 * token works once; reuse of a rotated one revokes its family). Either grant is refused, and its family revoked,
 * once the identity behind it (API key, user, membership) no longer holds.
 */

export type TokenSettings = Pick<
  Settings,
  "GATEWAY_OAUTH_ACCESS_TOKEN_TTL_SECONDS" | "GATEWAY_OAUTH_REFRESH_TOKEN_TTL_SECONDS"
>;

const required = (form: URLSearchParams, name: string) => {
  const value = form.get(name);
  if (!value) throw new OAuthError("invalid_request", `'${name}' is required.`, { param: name });
  return value;
};

export async function exchangeToken(
  records: Records,
  settings: TokenSettings,
  headers: Headers,
  form: URLSearchParams,
): Promise<IssuedTokens> {
  for (const [name] of form) {
    if (form.getAll(name).length > 1) {
      throw new OAuthError("invalid_request", `'${name}' is repeated.`, { param: name });
    }
  }
  const grantType = required(form, "grant_type");
  if (grantType !== "authorization_code" && grantType !== "refresh_token") {
    throw new OAuthError("unsupported_grant_type", `Unsupported grant_type '${grantType.slice(0, 100)}'.`, {
      param: "grant_type",
    });
  }
  const client = await authenticateClient(records, presentedClient(headers, form));
  if (!client.grant_types.includes(grantType)) {
    throw new OAuthError("unauthorized_client", `This client did not register the ${grantType} grant.`);
  }
  const grant =
    grantType === "authorization_code"
      ? await codeGrant(records, client, form)
      : await refreshGrant(records, client, form);
  // A grant never outlives its identity: a revoked or expired API key, a deactivated user or a lost membership ends
  // it here too, as every use of its access tokens does (bearer.ts). The whole family goes, so nothing of it
  // comes back should the identity return (a user reactivated).
  if (!(await currentPrincipal(records, grant.subject))) {
    await revokeFamily(records, grant.familyId);
    throw new OAuthError("invalid_grant", "The identity behind this grant no longer holds; authorize again.");
  }
  const lifetimes = {
    accessSeconds: settings.GATEWAY_OAUTH_ACCESS_TOKEN_TTL_SECONDS,
    refreshSeconds: settings.GATEWAY_OAUTH_REFRESH_TOKEN_TTL_SECONDS,
    refresh: client.grant_types.includes("refresh_token"),
  };
  try {
    const tokens = await issueTokens(records, grant, lifetimes);
    const now = Math.floor(Date.now() / 1000);
    await extendClient(records, client, now + lifetimes.refreshSeconds + 86_400);
    return tokens;
  } catch (error) {
    if (error instanceof FamilyRevoked) throw new OAuthError("invalid_grant", "This grant has been revoked.");
    throw error;
  }
}

async function codeGrant(records: Records, client: OAuthClient, form: URLSearchParams): Promise<TokenGrant> {
  const code = required(form, "code");
  const verifier = required(form, "code_verifier");
  const redirectUri = required(form, "redirect_uri");
  const claim = await claimCode(records, code);
  if (claim.outcome === "unknown") throw new OAuthError("invalid_grant", "Unknown or expired authorization code.");
  const stored = claim.code;
  if (stored.clientId !== client.client_id) {
    throw new OAuthError("invalid_grant", "The authorization code was issued to another client.");
  }
  if (claim.outcome === "replayed") {
    // Spec 5.5 / OAuth 2.1 section 4.1.3: a code works once; its second use revokes what the first one issued.
    await revokeFamily(records, stored.familyId);
    throw new OAuthError("invalid_grant", "The authorization code was already used; its tokens are revoked.");
  }
  if (stored.expiresAt <= Date.now() / 1000)
    throw new OAuthError("invalid_grant", "The authorization code has expired.");
  if (stored.redirectUri !== redirectUri) {
    throw new OAuthError("invalid_grant", "'redirect_uri' does not match the authorization request.", {
      param: "redirect_uri",
    });
  }
  if (!verifyPkce(verifier, stored.codeChallenge)) {
    throw new OAuthError("invalid_grant", "PKCE verification failed.", { param: "code_verifier" });
  }
  const resource = form.get("resource");
  if (resource && resource !== stored.resource) {
    throw new OAuthError("invalid_target", "'resource' differs from the authorization request.", { param: "resource" });
  }
  return {
    clientId: client.client_id,
    scope: stored.scope,
    resource: stored.resource,
    serverId: stored.serverId,
    subject: stored.subject,
    familyId: stored.familyId,
  };
}

async function refreshGrant(records: Records, client: OAuthClient, form: URLSearchParams): Promise<TokenGrant> {
  const token = required(form, "refresh_token");
  const claim = await claimRefreshToken(records, token);
  if (claim.outcome === "unknown") throw new OAuthError("invalid_grant", "Unknown, expired or revoked refresh token.");
  const stored = claim.token;
  if (stored.clientId !== client.client_id) {
    throw new OAuthError("invalid_grant", "The refresh token was issued to another client.");
  }
  if (claim.outcome === "reused") {
    await revokeFamily(records, stored.familyId);
    throw new OAuthError("invalid_grant", "The refresh token was already used; its grant is revoked.");
  }
  const resource = form.get("resource");
  if (resource && resource !== stored.resource) {
    throw new OAuthError("invalid_target", "'resource' differs from the grant's.", { param: "resource" });
  }
  // A refresh may narrow the scope (RFC 6749 section 6), never widen it.
  const requested = (form.get("scope") ?? "").split(" ").filter(Boolean);
  const granted = new Set(stored.scope.split(" "));
  if (requested.some((scope) => !granted.has(scope))) {
    throw new OAuthError("invalid_scope", "A refresh cannot widen the grant's scope.", { param: "scope" });
  }
  return {
    clientId: client.client_id,
    scope: requested.length > 0 ? [...new Set(requested)].join(" ") : stored.scope,
    resource: stored.resource,
    serverId: stored.serverId,
    subject: stored.subject,
    familyId: stored.familyId,
  };
}
