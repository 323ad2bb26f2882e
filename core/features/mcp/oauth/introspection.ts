import type { Principal } from "../../../auth/principal.ts";
import { isOrganisationWide } from "../../../auth/scopes.ts";
import { findUser } from "../../../control/directory.ts";
import type { User } from "../../../control/users/store.ts";
import type { Records } from "../../../store/ports.ts";
import { currentPrincipal } from "./grant-subject.ts";
import { OAuthError } from "./oauth-errors.ts";
import { findLiveToken } from "./tokens.ts";

/**
 * `POST /oauth/introspect` (RFC 7662). Callers: a confidential client (about the tokens it was issued) or an
 * organisation admin API key (about its organisation's tokens). Any other token, and any token whose identity
 * no longer holds, is `{"active": false}`. Spec 5.5: the answer carries the user's `display_name`.
 */

export type Introspector = { kind: "client"; clientId: string } | { kind: "admin"; principal: Principal };

export function requireAdminIntrospector(principal: Principal): Introspector {
  if (!isOrganisationWide(principal)) {
    throw new OAuthError("invalid_client", "Introspection needs a confidential client or an organisation admin key.");
  }
  return { kind: "admin", principal };
}

export const displayNameOf = (user: Pick<User, "name" | "first_name" | "last_name" | "email">) =>
  user.name?.trim() || [user.first_name, user.last_name].filter(Boolean).join(" ").trim() || user.email;

export async function introspect(
  records: Records,
  issuer: string,
  caller: Introspector,
  token: string,
): Promise<Record<string, unknown>> {
  const inactive = { active: false };
  const stored = await findLiveToken(records, token);
  if (!stored) return inactive;
  if (caller.kind === "client" && stored.clientId !== caller.clientId) return inactive;
  if (caller.kind === "admin" && stored.subject.organisationId !== caller.principal.organisationId) return inactive;
  const principal = await currentPrincipal(records, stored.subject);
  if (!principal) return inactive;
  const user = principal.userId ? await findUser(records, principal.organisationId, principal.userId) : undefined;
  return {
    active: true,
    scope: stored.scope,
    client_id: stored.clientId,
    username: user?.email ?? principal.userEmail ?? principal.keyId,
    display_name: user ? displayNameOf(user) : null,
    sub: principal.userId ?? principal.keyId,
    aud: stored.resource ?? issuer,
    iss: issuer,
    exp: stored.expiresAt,
    iat: stored.issuedAt,
    token_type: stored.kind === "access" ? "Bearer" : "refresh_token",
    organisation_id: principal.organisationId,
    workspace_id: principal.workspaceId ?? null,
  };
}
