import type { OrganisationRole, WorkspaceRole } from "../../auth/principal.ts";
import { newSecret, sha256Hex } from "../../util/ids.ts";
import type { Records } from "../../store/ports.ts";
import { type Resource, ResourceStore } from "../resource-store.ts";

/**
 * Users (kind USER, ids `usr_...`) and invites (kind INVITE, ids `inv_...`) of an organisation.
 * - A user's slug is its lower-cased email, so the slug pointer makes emails unique per organisation and a
 *   user can be found by email.
 * - A pending invite holds its email as slug (one pending invite per email); accepting, revoking or finding
 *   it expired releases the slug. Invite tokens are secrets: only their sha256 is stored, on the invite and in
 *   a lookup record pk `INVITETOKEN#<sha256>` (sk `INVITETOKEN`) that points at the invite.
 * The admin API's request schemas live in users-schemas.ts (the data plane imports this module for lookups).
 */

export interface User extends Resource {
  slug: string;
  email: string;
  name?: string | null;
  first_name?: string | null;
  last_name?: string | null;
  role: OrganisationRole;
}

export interface InviteWorkspace {
  id: string;
  role: WorkspaceRole;
}

export interface Invite extends Resource {
  slug?: string;
  email: string;
  role: OrganisationRole;
  workspaces: InviteWorkspace[];
  workspace_api_key_details?: Record<string, unknown>;
  status: "pending" | "accepted" | "revoked";
  tokenHash: string;
  /** Unix seconds. */
  expiresAt: number;
  invitedBy?: { keyId?: string; userId?: string };
  acceptedAt?: number;
  acceptedUserId?: string;
  resentAt?: number;
}

export const userStore = (records: Records) => new ResourceStore<User>(records, "USER", "usr");
export const inviteStore = (records: Records) => new ResourceStore<Invite>(records, "INVITE", "inv");

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

export const inviteTokenKey = (hash: string) => ({ pk: `INVITETOKEN#${hash}`, sk: "INVITETOKEN" });

/** A new invite token and its hash; the lookup record lives 30 days past the invite's expiry. */
export async function issueInviteToken(
  records: Records,
  invite: { id: string; organisationId: string; expiresAt: number },
) {
  const token = newSecret("inv");
  const hash = sha256Hex(token);
  await records.put(
    {
      ...inviteTokenKey(hash),
      inviteId: invite.id,
      organisationId: invite.organisationId,
      ttl: invite.expiresAt + 30 * 86_400,
    },
    { exists: false },
  );
  return { token, hash };
}

export async function deleteInviteToken(records: Records, hash: string): Promise<void> {
  const key = inviteTokenKey(hash);
  await records.delete(key.pk, key.sk);
}

export async function findInviteByToken(records: Records, token: string): Promise<Invite | undefined> {
  const hash = sha256Hex(token);
  const key = inviteTokenKey(hash);
  const pointer = await records.get(key.pk, key.sk);
  if (!pointer) return undefined;
  const invite = await inviteStore(records).get(pointer.organisationId as string, pointer.inviteId as string);
  return invite && invite.tokenHash === hash ? invite : undefined;
}

export type InviteStatus = "pending" | "accepted" | "revoked" | "expired";

export function inviteStatus(invite: Invite, now = Math.floor(Date.now() / 1000)): InviteStatus {
  if (invite.status === "pending" && invite.expiresAt <= now) return "expired";
  return invite.status;
}

const iso = (seconds: number | undefined) => (seconds ? new Date(seconds * 1000).toISOString() : null);

export function presentUser(user: User, workspaces?: Array<{ workspaceId: string; role: WorkspaceRole }>) {
  return {
    object: "user",
    id: user.id,
    email: user.email,
    name: user.name ?? null,
    first_name: user.first_name ?? null,
    last_name: user.last_name ?? null,
    role: user.role,
    ...(workspaces ? { workspaces: workspaces.map((ws) => ({ id: ws.workspaceId, role: ws.role })) } : {}),
    created_at: iso(user.createdAt),
    last_updated_at: iso(user.updatedAt),
  };
}

export function presentInvite(invite: Invite) {
  return {
    object: "invite",
    id: invite.id,
    email: invite.email,
    role: invite.role,
    workspaces: invite.workspaces,
    workspace_api_key_details: invite.workspace_api_key_details ?? null,
    status: inviteStatus(invite),
    expires_at: iso(invite.expiresAt),
    accepted_at: iso(invite.acceptedAt),
    accepted_user_id: invite.acceptedUserId ?? null,
    created_at: iso(invite.createdAt),
    last_updated_at: iso(invite.updatedAt),
  };
}
