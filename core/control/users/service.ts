import type { Principal } from "../../auth/principal.ts";
import type { Page } from "../../store/ports.ts";
import { requireOrganisationAdmin } from "../access.ts";
import { type ControlDeps, audit } from "../deps.ts";
import { Conflict, Forbidden, Gone, Invalid, NotFound } from "../errors.ts";
import { type JoinResult, joinWorkspace } from "../workspaces/join.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import { listUserWorkspaces, removeUserMemberships } from "../workspaces/members.ts";
import { getOrganisation } from "../organisation/store.ts";
import { type PageRequest, readPage } from "../paging.ts";
import {
  type Invite,
  type InviteWorkspace,
  type User,
  deleteInviteToken,
  findInviteByToken,
  inviteStatus,
  inviteStore,
  issueInviteToken,
  normaliseEmail,
  presentInvite,
  presentUser,
  userStore,
} from "./store.ts";
import type { InviteAcceptInput, InviteCreateInput, UserUpdateInput } from "./schemas.ts";
import { workspaceStore } from "../workspaces/store.ts";

/**
 * Users of the organisation and invites (spec 5.5), for organisation admins, except accepting an invite,
 * which the invitee does with the invite's token (no principal). There is no mail service: the invite token
 * is returned to the admin once (at creation and at resend) to pass on.
 */

export interface UserDeps extends ControlDeps {
  /** How long a new or resent invite stays valid. */
  inviteTtlSeconds: number;
  /** Revokes every active key of a user, returning their ids (core/control/api-keys/rules.ts). */
  revokeUserKeys(organisationId: string, userId: string): Promise<string[]>;
}

export type UserView = ReturnType<typeof presentUser>;
export type InviteView = ReturnType<typeof presentInvite>;

/** An invite with its token, which only its creator sees, once. */
export interface IssuedInvite {
  invite: InviteView;
  token: string;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function loadUser(deps: ControlDeps, principal: Principal, ref: string): Promise<User> {
  requireOrganisationAdmin(principal);
  const user = await userStore(deps.records).get(
    principal.organisationId,
    ref.includes("@") ? normaliseEmail(ref) : ref,
  );
  if (!user) throw new NotFound(`No user '${ref}'.`, { code: "user_not_found" });
  return user;
}

async function loadInvite(deps: ControlDeps, principal: Principal, id: string): Promise<Invite> {
  requireOrganisationAdmin(principal);
  const store = inviteStore(deps.records);
  const invite = await store.get(principal.organisationId, id);
  // Only ids: a pending invite's slug is its email, which is not a public handle of the invite.
  if (!invite || !store.isId(id)) throw new NotFound(`No invite '${id}'.`, { code: "invite_not_found" });
  return invite;
}

/** A pending invite for this email that has expired gives its email back (slug released); a live one conflicts. */
async function releaseExpiredInvite(deps: ControlDeps, organisationId: string, email: string): Promise<void> {
  const store = inviteStore(deps.records);
  const existing = await store.get(organisationId, email);
  if (!existing) return;
  if (inviteStatus(existing) === "pending")
    throw new Conflict(`A pending invite for '${email}' already exists.`, { param: "email" });
  await store.update(existing, { slug: undefined });
}

const userExists = (email: string) =>
  new Conflict(`A user with email '${email}' already exists in this organisation.`, { param: "email" });

// --- users -------------------------------------------------------------------------------------------------

/** `role` filters exactly, `email` by substring (lower-case). */
export async function listUsers(
  deps: ControlDeps,
  principal: Principal,
  lazyInput: Lazy<PageRequest & { role?: string; email?: string }>,
): Promise<Page<UserView>> {
  requireOrganisationAdmin(principal);
  const input = await resolveLazy(lazyInput);
  const email = input.email?.toLowerCase();
  const page = await readPage(() =>
    userStore(deps.records).list(principal.organisationId, {
      limit: input.limit,
      cursor: input.cursor,
      filter: (user) => (!input.role || user.role === input.role) && (!email || user.email.includes(email)),
    }),
  );
  return { items: page.items.map((user) => presentUser(user)), cursor: page.cursor };
}

/** A user by id or email, with the workspaces they belong to. */
export async function getUser(deps: ControlDeps, principal: Principal, input: { user: string }): Promise<UserView> {
  const user = await loadUser(deps, principal, input.user);
  return presentUser(user, await listUserWorkspaces(deps.records, user.id));
}

export async function updateUser(
  deps: ControlDeps,
  principal: Principal,
  input: { user: string; changes: Lazy<UserUpdateInput> },
): Promise<UserView> {
  const current = await loadUser(deps, principal, input.user);
  const body = await resolveLazy(input.changes);
  const changes: Partial<User> = {};
  for (const field of ["role", "name", "first_name", "last_name"] as const) {
    if (body[field] !== undefined) (changes as Record<string, unknown>)[field] = body[field];
  }
  const updated = await userStore(deps.records).update(current, changes);
  await audit(deps, principal, {
    action: "update",
    resourceType: "user",
    resourceId: updated.id,
    before: presentUser(current),
    after: presentUser(updated),
  });
  return presentUser(updated, await listUserWorkspaces(deps.records, updated.id));
}

/** Deletes a user, their memberships and (first) their keys; nobody deletes their own user. */
export async function deleteUser(
  deps: UserDeps,
  principal: Principal,
  input: { user: string },
): Promise<{ id: string; revokedApiKeys: string[] }> {
  const user = await loadUser(deps, principal, input.user);
  if (principal.userId === user.id)
    throw new Invalid("You cannot delete your own user.", { param: "id", code: "cannot_delete_self" });
  // Keys first: a deleted user's keys must stop working even if a later step fails.
  const revokedApiKeys = await deps.revokeUserKeys(user.organisationId, user.id);
  await removeUserMemberships(deps.records, user.id);
  await deleteUserRecord(deps, principal, user, { revoked_api_keys: revokedApiKeys });
  return { id: user.id, revokedApiKeys };
}

/** The user's record deleted, audited with what went with it (`after`: the keys revoked, the source). */
export async function deleteUserRecord(
  deps: ControlDeps,
  principal: Principal,
  user: User,
  after: Record<string, unknown>,
): Promise<void> {
  await userStore(deps.records).delete(user);
  await audit(deps, principal, {
    action: "delete",
    resourceType: "user",
    resourceId: user.id,
    before: presentUser(user),
    after,
  });
}

// --- invites -----------------------------------------------------------------------------------------------

/** `status` and `role` filter exactly, `email` by substring (lower-case). */
export async function listInvites(
  deps: ControlDeps,
  principal: Principal,
  lazyInput: Lazy<PageRequest & { status?: string; role?: string; email?: string }>,
): Promise<Page<InviteView>> {
  requireOrganisationAdmin(principal);
  const input = await resolveLazy(lazyInput);
  const email = input.email?.toLowerCase();
  const page = await readPage(() =>
    inviteStore(deps.records).list(principal.organisationId, {
      limit: input.limit,
      cursor: input.cursor,
      filter: (invite) =>
        (!input.status || inviteStatus(invite) === input.status) &&
        (!input.role || invite.role === input.role) &&
        (!email || invite.email.includes(email)),
    }),
  );
  return { items: page.items.map(presentInvite), cursor: page.cursor };
}

/** Only owners invite owners; one pending invite per email; the workspaces named must exist. */
export async function createInvite(
  deps: UserDeps,
  principal: Principal,
  lazyInput: Lazy<InviteCreateInput>,
): Promise<IssuedInvite> {
  requireOrganisationAdmin(principal);
  const input = await resolveLazy(lazyInput);
  const organisationId = principal.organisationId;
  if (input.role === "owner" && principal.organisationRole !== "owner") {
    throw new Forbidden("Only an organisation owner can invite owners.", { param: "role" });
  }
  if (await userStore(deps.records).get(organisationId, input.email)) throw userExists(input.email);
  const workspaces: InviteWorkspace[] = [];
  for (const [index, entry] of input.workspaces.entries()) {
    const workspace = await workspaceStore(deps.records).get(organisationId, entry.id);
    if (!workspace) {
      throw new Invalid(`No workspace '${entry.id}'.`, {
        param: `workspaces[${index}].id`,
        code: "workspace_not_found",
      });
    }
    if (!workspaces.some((known) => known.id === workspace.id)) workspaces.push({ id: workspace.id, role: entry.role });
  }
  await releaseExpiredInvite(deps, organisationId, input.email);
  const store = inviteStore(deps.records);
  const invite = await store.create(organisationId, {
    slug: input.email,
    email: input.email,
    role: input.role,
    workspaces,
    workspace_api_key_details: input.workspace_api_key_details,
    status: "pending",
    tokenHash: "",
    expiresAt: nowSeconds() + deps.inviteTtlSeconds,
    invitedBy: { keyId: principal.keyId, userId: principal.userId },
  });
  const { token, hash } = await issueInviteToken(deps.records, invite);
  const stored = await store.update(invite, { tokenHash: hash });
  const view = presentInvite(stored);
  await audit(deps, principal, { action: "create", resourceType: "invite", resourceId: invite.id, after: view });
  return { invite: view, token };
}

export async function getInvite(
  deps: ControlDeps,
  principal: Principal,
  input: { invite: string },
): Promise<InviteView> {
  return presentInvite(await loadInvite(deps, principal, input.invite));
}

/** A new token and expiry for a pending or expired invite; the old token stops working. */
export async function resendInvite(
  deps: UserDeps,
  principal: Principal,
  input: { invite: string },
): Promise<IssuedInvite> {
  const current = await loadInvite(deps, principal, input.invite);
  const status = inviteStatus(current);
  if (status === "accepted" || status === "revoked") {
    throw new Conflict(`The invite is ${status}; create a new one.`, { code: `invite_${status}` });
  }
  const expiresAt = nowSeconds() + deps.inviteTtlSeconds;
  const { token, hash } = await issueInviteToken(deps.records, {
    id: current.id,
    organisationId: current.organisationId,
    expiresAt,
  });
  // An expired invite may have given its email back: claim it again (Conflict if a newer invite holds it).
  const updated = await inviteStore(deps.records).update(current, {
    tokenHash: hash,
    expiresAt,
    resentAt: nowSeconds(),
    slug: current.email,
  });
  await deleteInviteToken(deps.records, current.tokenHash);
  const view = presentInvite(updated);
  await audit(deps, principal, {
    action: "resend",
    resourceType: "invite",
    resourceId: current.id,
    before: presentInvite(current),
    after: view,
  });
  return { invite: view, token };
}

/** Revokes an invite that was not accepted yet. */
export async function revokeInvite(
  deps: ControlDeps,
  principal: Principal,
  input: { invite: string },
): Promise<{ id: string }> {
  const current = await loadInvite(deps, principal, input.invite);
  if (current.status === "accepted")
    throw new Conflict("The invite was already accepted.", { code: "invite_accepted" });
  const updated = await inviteStore(deps.records).update(current, { status: "revoked", slug: undefined });
  await audit(deps, principal, {
    action: "revoke",
    resourceType: "invite",
    resourceId: current.id,
    before: presentInvite(current),
    after: presentInvite(updated),
  });
  return { id: current.id };
}

/**
 * The invitee proves the invite with its token (no principal: the new user is the actor). Single use; expired
 * or revoked invites are Gone. Creates the user, joins the invite's workspaces (still existing) and returns
 * the workspace user keys made for them (secrets shown once).
 */
export async function acceptInvite(
  deps: ControlDeps,
  input: Omit<InviteAcceptInput, "token"> & { token: string | undefined },
): Promise<{ user: UserView; inviteId: string; apiKeys: NonNullable<JoinResult["apiKey"]>[] }> {
  if (!input.token) throw new Invalid("'token' is required.", { param: "token", code: "missing_required_parameter" });
  const invite = await findInviteByToken(deps.records, input.token);
  if (!invite) throw new NotFound("Unknown or superseded invite token.", { param: "token", code: "invite_not_found" });
  const status = inviteStatus(invite);
  if (status !== "pending") {
    throw new Gone(`The invite is ${status === "accepted" ? "already used" : status}.`, {
      param: "token",
      code: `invite_${status}`,
    });
  }
  const users = userStore(deps.records);
  if (await users.get(invite.organisationId, invite.email)) throw userExists(invite.email);
  // Claim the invite first (version-checked): of two concurrent accepts, one gets a conflict here.
  const store = inviteStore(deps.records);
  const claimed = await store.update(invite, { status: "accepted", slug: undefined, acceptedAt: nowSeconds() });
  let user: User;
  try {
    user = await users.create(invite.organisationId, {
      slug: invite.email,
      email: invite.email,
      name: input.name ?? ([input.first_name, input.last_name].filter(Boolean).join(" ") || null),
      first_name: input.first_name ?? null,
      last_name: input.last_name ?? null,
      role: invite.role,
    });
  } catch (error) {
    await store.update(claimed, { status: "pending", slug: invite.email, acceptedAt: undefined }).catch(() => {});
    throw error;
  }
  // The token record stays until its ttl, so a second use is Gone (`invite_accepted`) rather than NotFound.
  await store.update(claimed, { acceptedUserId: user.id });

  const organisation = await getOrganisation(deps.records, invite.organisationId);
  const joined: JoinResult[] = [];
  for (const entry of invite.workspaces) {
    const workspace = await workspaceStore(deps.records).get(invite.organisationId, entry.id);
    if (!workspace) continue; // deleted since the invite was made
    const keyDetails = invite.workspace_api_key_details as { name?: string; scopes?: string[] } | undefined;
    joined.push(await joinWorkspace(deps.records, { organisation, workspace, user, role: entry.role, keyDetails }));
  }
  const actor: Principal = {
    kind: "jwt",
    organisationId: invite.organisationId,
    userId: user.id,
    userEmail: user.email,
    organisationRole: user.role,
    scopes: [],
  };
  const view = presentUser(
    user,
    joined.map((entry) => entry.membership),
  );
  await audit(deps, actor, {
    action: "accept_invite",
    resourceType: "user",
    resourceId: user.id,
    after: { ...view, invite_id: invite.id },
  });
  return { user: view, inviteId: invite.id, apiKeys: joined.flatMap((entry) => (entry.apiKey ? [entry.apiKey] : [])) };
}
