/** Who is calling. Built by authentication; read by authorisation, policies, logs and every handler. */

export type OrganisationRole = "owner" | "admin" | "member";
export type WorkspaceRole = "manager" | "member";

export interface Principal {
  /** How the caller proved who they are. */
  /** `oauth`: an access token the gateway's OAuth server issued to an MCP client (core/features/mcp/oauth). */
  kind: "api_key" | "jwt" | "session" | "oauth";
  organisationId: string;
  /** Set for workspace keys and for JWTs that name a workspace; admin keys reach every workspace. */
  workspaceId?: string;
  keyId?: string;
  /**
   * Reach only: `organisation` keys act across every workspace, `workspace` keys in one. Rights come from
   * `scopes` (core/auth/scopes.ts), never from the type.
   */
  keyType?: "organisation" | "workspace";
  /** `service` keys act for a system; `user` keys act for one user. */
  keySubType?: "service" | "user";
  userId?: string;
  userEmail?: string;
  organisationRole?: OrganisationRole;
  workspaceRole?: WorkspaceRole;
  scopes: string[];
  /** The API key's own default config (`defaults.config_id`, a config id): routes requests that name none. */
  defaultConfigId?: string;
}
