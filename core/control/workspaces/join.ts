import { createApiKey } from "../../auth/api-key-records.ts";
import type { WorkspaceRole } from "../../auth/principal.ts";
import { isKnownScope } from "../../auth/scope-list.ts";
import type { Records } from "../../store/ports.ts";
import { type Membership, addMembership } from "./members.ts";
import type { OrganisationRecord } from "../organisation/store.ts";
import type { User } from "../users/store.ts";
import { type Workspace, autoCreateUserKeys } from "./store.ts";

/** Scopes of a workspace user key created when a member joins (inference needs none; these read own logs). */
export const AUTO_USER_KEY_SCOPES = ["completions.write", "models.list", "logs.list", "logs.view"];

export interface JoinResult {
  membership: Membership;
  /** A workspace user key made for the member (spec 5.5 `user_api_key_auto_create`); the secret is shown once. */
  apiKey?: { id: string; key: string; workspace_id: string };
}

/**
 * Adds a user to a workspace. When `user_api_key_auto_create` applies (workspace override, else organisation
 * setting, else for the default workspace `default_workspace_user_api_key_auto_create`), or the invite asked
 * for keys (`workspace_api_key_details`), also creates a workspace user key with the organisation's
 * `user_api_key_rotation_period`.
 */
export async function joinWorkspace(
  records: Records,
  input: {
    organisation: OrganisationRecord;
    workspace: Workspace;
    user: User;
    role: WorkspaceRole;
    keyDetails?: { name?: string; scopes?: string[] };
    createdBy?: string;
  },
): Promise<JoinResult> {
  const { organisation, workspace, user, role } = input;
  const membership = await addMembership(records, {
    organisationId: organisation.id,
    workspaceId: workspace.id,
    userId: user.id,
    role,
  });
  if (!input.keyDetails && !autoCreateUserKeys(organisation, workspace)) return { membership };
  const rotationDays = organisation.settings?.user_api_key_rotation_period ?? undefined;
  const now = Math.floor(Date.now() / 1000);
  const scopes = (input.keyDetails?.scopes ?? AUTO_USER_KEY_SCOPES).filter(isKnownScope);
  const created = await createApiKey(records, {
    organisationId: organisation.id,
    workspaceId: workspace.id,
    name: input.keyDetails?.name ?? `${user.email} (${workspace.slug})`,
    keyType: "workspace",
    keySubType: "user",
    userId: user.id,
    scopes,
    organisationRole: user.role,
    workspaceRole: role,
    rotationPeriodDays: rotationDays,
    nextRotationAt: rotationDays ? now + rotationDays * 86_400 : undefined,
    createdBy: input.createdBy,
  });
  return { membership, apiKey: { id: created.id, key: created.secret, workspace_id: workspace.id } };
}
