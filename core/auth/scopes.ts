import { Forbidden, Unauthenticated } from "../control/errors.ts";
import type { Principal } from "./principal.ts";

/**
 * Authorisation has two parts:
 * - rights: what a caller may do comes from its scopes (`*` holds them all) and, for a caller acting for a
 *   user (user keys, JWTs), that user's role. A key's type never grants a right by itself;
 * - reach: which workspaces it may act in. Organisation keys (and JWTs of organisation owners/admins that name
 *   no workspace) reach every workspace; workspace keys and workspace JWTs only their own.
 * "Admin-only" operations (spec 5.5: organisation settings, workspaces, users and permissions) need both: the
 * route's scope (checked by the app from the route table) and organisation-wide reach (requireAdmin).
 */

export const holdsScope = (principal: Principal, scope: string) =>
  principal.scopes.includes("*") || principal.scopes.includes(scope);

/** The first of `scopes` the principal does not hold, if any. */
export const firstMissingScope = (principal: Principal, scopes: readonly string[]) =>
  scopes.find((scope) => !holdsScope(principal, scope));

/**
 * Throws Forbidden (403) naming the missing scope unless the principal holds it, or `alternative` (a route's
 * organisation-level scope, RouteSpec.organisationScope), or the wildcard `*`.
 */
export function requireScope(principal: Principal | undefined, scope: string, alternative?: string): Principal {
  if (!principal) throw new Unauthenticated("Authentication required.");
  if (holdsScope(principal, scope) || (alternative && holdsScope(principal, alternative))) return principal;
  const missing = alternative ? `'${scope}' (or '${alternative}')` : `'${scope}'`;
  throw new Forbidden(`This key lacks the ${missing} scope.`, { code: "missing_scope" });
}

/**
 * The workspace a request may act on: workspace-bound callers their own; organisation-wide callers may name
 * any (or none, meaning all workspaces of the organisation).
 */
export function workspaceScope(principal: Principal, requested: string | null | undefined): string | undefined {
  if (!isOrganisationWide(principal)) {
    if (requested && requested !== principal.workspaceId)
      throw new Forbidden("This key cannot access another workspace.", { code: "workspace_forbidden" });
    return principal.workspaceId;
  }
  return requested ?? undefined;
}

/**
 * Reach, not rights: true for callers that act across the whole organisation: organisation keys, and JWTs of
 * organisation owners/admins that are not bound to one workspace. Workspace keys never are, whoever created
 * them. What such a caller may do there is still limited by its scopes.
 */
export function isOrganisationWide(principal: Principal): boolean {
  if (principal.kind === "api_key") return principal.keyType === "organisation" && !principal.workspaceId;
  return !principal.workspaceId && (principal.organisationRole === "owner" || principal.organisationRole === "admin");
}

/**
 * Admin-only operations: organisation-wide reach (403 for workspace keys and workspace-bound JWTs). The right
 * itself is the route's scope (e.g. `organisation_settings.read`, `workspaces.create`), checked before.
 */
export function requireAdmin(principal: Principal | undefined): Principal {
  if (!principal) throw new Unauthenticated("Authentication required.");
  if (isOrganisationWide(principal)) return principal;
  throw new Forbidden("This operation needs an organisation-level key (or an organisation admin's JWT).", {
    code: "admin_required",
  });
}

/**
 * True when the caller manages `workspaceId`: an organisation-wide caller, a workspace service key of that
 * workspace, or a user key / JWT whose user is a manager of it (spec 5.5: members cannot).
 */
export function managesWorkspace(principal: Principal, workspaceId: string): boolean {
  if (isOrganisationWide(principal)) return true;
  if (principal.workspaceId !== workspaceId) return false;
  if (principal.kind === "api_key" && principal.keySubType === "service") return true;
  return principal.workspaceRole === "manager";
}
