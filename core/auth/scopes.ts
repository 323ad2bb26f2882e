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
    if (requested && requested !== principal.workspaceId) throw forbidden("This key cannot access another workspace.", "workspace_forbidden");
    return principal.workspaceId;
  }
  return requested ?? undefined;
}
