import type { Principal } from "../auth/principal.ts";
import { isOrganisationWide, workspaceScope } from "../auth/scopes.ts";
import { Forbidden, Invalid } from "./errors.ts";

/**
 * Spec 5.5: organisation settings, workspaces, users and permissions are for organisation admins (admin keys,
 * JWTs of owners/admins not bound to a workspace). Workspace keys and workspace-bound JWTs are refused.
 */
export function requireOrganisationAdmin(principal: Principal): Principal {
  if (isOrganisationWide(principal)) return principal;
  throw new Forbidden("This operation needs an organisation admin key.", { code: "admin_required" });
}

/** The workspace a call acts in: a workspace-bound caller's own, else the one it names (required then). */
export function requiredWorkspace(principal: Principal, requested: string | undefined): string {
  const workspaceId = workspaceScope(principal, requested);
  if (!workspaceId) {
    throw new Invalid("workspace_id is required with an organisation-wide key.", {
      param: "workspace_id",
      code: "missing_required_parameter",
    });
  }
  return workspaceId;
}
