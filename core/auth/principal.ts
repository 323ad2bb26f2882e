/** Who is calling. Built by authentication; read by authorisation, policies, logs and every handler. */

export type OrganisationRole = "owner" | "admin" | "member";
export type WorkspaceRole = "manager" | "member";

export interface Principal {
  /** How the caller proved who they are. */
  kind: "api_key" | "jwt";
  organisationId: string;
  /** Set for workspace keys and for JWTs that name a workspace; admin keys reach every workspace. */
  workspaceId?: string;
  keyId?: string;
  /** `organisation` keys are admin keys; `workspace` keys are bound to one workspace. */
  keyType?: "organisation" | "workspace";
  /** `service` keys act for a system; `user` keys act for one user. */
  keySubType?: "service" | "user";
  userId?: string;
  userEmail?: string;
  organisationRole?: OrganisationRole;
  workspaceRole?: WorkspaceRole;
  scopes: string[];
}

export const isAdmin = (principal: Principal) =>
  principal.keyType === "organisation" ||
  principal.organisationRole === "owner" ||
  principal.organisationRole === "admin";
