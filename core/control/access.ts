import type { Principal } from "../auth/principal.ts";
import { isOrganisationWide } from "../auth/scopes.ts";
import { Forbidden } from "./errors.ts";

/**
 * Spec 5.5: organisation settings, workspaces, users and permissions are for organisation admins (admin keys,
 * JWTs of owners/admins not bound to a workspace). Workspace keys and workspace-bound JWTs are refused.
 */
export function requireOrganisationAdmin(principal: Principal): Principal {
  if (isOrganisationWide(principal)) return principal;
  throw new Forbidden("This operation needs an organisation admin key.", { code: "admin_required" });
}
