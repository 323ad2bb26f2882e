import { forbidden, unauthorized } from "../http/errors.ts";
import type { Principal } from "./principal.ts";

/** Throws 403 naming the missing scope unless the principal holds it (or the wildcard `*`). */
export function requireScope(principal: Principal | undefined, scope: string): Principal {
  if (!principal) throw unauthorized("Authentication required.");
  if (principal.scopes.includes("*") || principal.scopes.includes(scope)) return principal;
  throw forbidden(`This key lacks the '${scope}' scope.`, "missing_scope");
}

/**
 * The workspace a request may act on: workspace keys are bound to their own; organisation keys may name any
 * (or none, meaning all workspaces of the organisation).
 */
export function workspaceScope(principal: Principal, requested: string | null | undefined): string | undefined {
  if (principal.keyType === "workspace" || (principal.workspaceId && principal.keyType !== "organisation")) {
    if (requested && requested !== principal.workspaceId)
      throw forbidden("This key cannot access another workspace.", "workspace_forbidden");
    return principal.workspaceId;
  }
  return requested ?? undefined;
}

/**
 * True for callers that act for the whole organisation: organisation (admin) keys, and JWTs of organisation
 * owners/admins that are not bound to one workspace. Workspace keys never are, whoever created them.
 */
export function isOrganisationAdmin(principal: Principal): boolean {
  if (principal.kind === "api_key") return principal.keyType === "organisation";
  return !principal.workspaceId && (principal.organisationRole === "owner" || principal.organisationRole === "admin");
}

/**
 * Admin-only operations (spec 5.5: organisation settings, workspaces, users and permissions): 403 for
 * workspace keys and workspace-bound JWTs.
 */
export function requireAdmin(principal: Principal | undefined): Principal {
  if (!principal) throw unauthorized("Authentication required.");
  if (isOrganisationAdmin(principal)) return principal;
  throw forbidden("This operation needs an organisation admin key.", "admin_required");
}

/**
 * True when the caller manages `workspaceId`: an organisation admin, a workspace service key of that
 * workspace, or a user key / JWT whose user is a manager of it (spec 5.5: members cannot).
 */
export function managesWorkspace(principal: Principal, workspaceId: string): boolean {
  if (isOrganisationAdmin(principal)) return true;
  if (principal.workspaceId !== workspaceId) return false;
  if (principal.kind === "api_key" && principal.keySubType === "service") return true;
  return principal.workspaceRole === "manager";
}
