import { revokeUserKeys } from "../../control/api-keys.ts";
import type { Principal } from "../../auth/principal.ts";
import { requireAdmin } from "../../auth/scopes.ts";
import { writeAudit } from "../../control/audit.ts";
import { type JoinResult, joinWorkspace } from "../../control/join.ts";
import { listPage, listResponse, readListQuery } from "../../control/list-query.ts";
import { listUserWorkspaces, removeUserMemberships } from "../../control/members.ts";
import { getOrganisation } from "../../control/organisation.ts";
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
} from "../../control/users.ts";
import { inviteAcceptSchema, inviteCreateSchema, userUpdateSchema } from "../../control/users-schemas.ts";
import { workspaceStore } from "../../control/workspaces.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { HttpError, badRequest, conflict, notFound } from "../../http/errors.ts";
import { json, readBody, readText, validate } from "../../http/json.ts";

/**
 * Users of the organisation (`/v1/admin/users`) and invites (`/v1/admin/users/invites`), admin only (spec 5.5),
 * except accepting an invite, which the invitee does with the invite's token. There is no mail service: the
 * token and an accept URL are returned to the admin once (at creation and at resend) to pass on.
 */

const records = (ctx: RequestContext) => ctx.services.stores.records;
const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const nowSeconds = () => Math.floor(Date.now() / 1000);

async function loadUser(ctx: RequestContext, id: string): Promise<User> {
  const principal = requireAdmin(ctx.principal);
  const ref = id.includes("@") ? normaliseEmail(id) : id;
  const user = await userStore(records(ctx)).get(principal.organisationId, ref);
  if (!user) throw notFound(`No user '${id}'.`, "user_not_found");
  return user;
}

async function loadInvite(ctx: RequestContext, id: string): Promise<Invite> {
  const principal = requireAdmin(ctx.principal);
  const invite = await inviteStore(records(ctx)).get(principal.organisationId, id);
  // Only ids: a pending invite's slug is its email, which is not a public handle of the invite.
  if (!invite || !inviteStore(records(ctx)).isId(id)) throw notFound(`No invite '${id}'.`, "invite_not_found");
  return invite;
}

function acceptUrl(request: Request, ctx: RequestContext, token: string): string {
  const base = ctx.services.settings.GATEWAY_PUBLIC_URL ?? new URL(request.url).origin;
  return `${base.replace(/\/+$/, "")}/v1/admin/users/invites/accept?token=${encodeURIComponent(token)}`;
}

const inviteTtlSeconds = (ctx: RequestContext) => ctx.services.settings.GATEWAY_INVITE_TTL_HOURS * 3600;

/** A pending invite for this email that has expired gives its email back (slug released); a live one is a 409. */
async function releaseExpiredInvite(ctx: RequestContext, organisationId: string, email: string): Promise<void> {
  const store = inviteStore(records(ctx));
  const existing = await store.get(organisationId, email);
  if (!existing) return;
  if (inviteStatus(existing) === "pending") throw conflict(`A pending invite for '${email}' already exists.`, "email");
  await store.update(existing, { slug: undefined });
}

export const handlers: HandlerMap = {
  // --- users ---------------------------------------------------------------------------------------------
  async listUsers(request, ctx) {
    const principal = requireAdmin(ctx.principal);
    const query = readListQuery(request);
    const params = new URL(request.url).searchParams;
    const role = params.get("role");
    const email = params.get("email")?.toLowerCase();
    const page = await listPage(() =>
      userStore(records(ctx)).list(principal.organisationId, {
        limit: query.limit,
        cursor: query.cursor,
        filter: (user) => (!role || user.role === role) && (!email || user.email.includes(email)),
      }),
    );
    return listResponse(page, (user) => presentUser(user));
  },

  async getUser(_request, ctx) {
    const user = await loadUser(ctx, ctx.params.id!);
    return json(presentUser(user, await listUserWorkspaces(records(ctx), user.id)));
  },

  async updateUser(request, ctx) {
    const current = await loadUser(ctx, ctx.params.id!);
    const body = await readBody(request, userUpdateSchema, bodyLimit(ctx));
    const changes: Partial<User> = {};
    for (const field of ["role", "name", "first_name", "last_name"] as const) {
      if (body[field] !== undefined) (changes as Record<string, unknown>)[field] = body[field];
    }
    const updated = await userStore(records(ctx)).update(current, changes);
    await writeAudit(ctx, {
      action: "update",
      resourceType: "user",
      resourceId: updated.id,
      before: presentUser(current),
      after: presentUser(updated),
    });
    return json(presentUser(updated, await listUserWorkspaces(records(ctx), updated.id)));
  },

  async deleteUser(_request, ctx) {
    const user = await loadUser(ctx, ctx.params.id!);
    if (ctx.principal?.userId === user.id)
      throw badRequest("You cannot delete your own user.", "id", "cannot_delete_self");
    // Keys first: a deleted user's keys must stop working even if a later step fails.
    const revokedKeys = await revokeUserKeys(ctx, user.organisationId, user.id);
    await removeUserMemberships(records(ctx), user.id);
    await userStore(records(ctx)).delete(user);
    await writeAudit(ctx, {
      action: "delete",
      resourceType: "user",
      resourceId: user.id,
      before: presentUser(user),
      after: { revoked_api_keys: revokedKeys },
    });
    return json({ id: user.id, object: "user", deleted: true, revoked_api_keys: revokedKeys });
  },

  // --- invites -------------------------------------------------------------------------------------------
  async listInvites(request, ctx) {
    const principal = requireAdmin(ctx.principal);
    const query = readListQuery(request);
    const params = new URL(request.url).searchParams;
    const status = params.get("status");
    const role = params.get("role");
    const email = params.get("email")?.toLowerCase();
    const page = await listPage(() =>
      inviteStore(records(ctx)).list(principal.organisationId, {
        limit: query.limit,
        cursor: query.cursor,
        filter: (invite) =>
          (!status || inviteStatus(invite) === status) &&
          (!role || invite.role === role) &&
          (!email || invite.email.includes(email)),
      }),
    );
    return listResponse(page, presentInvite);
  },

  async createInvite(request, ctx) {
    const principal = requireAdmin(ctx.principal);
    const body = await readBody(request, inviteCreateSchema, bodyLimit(ctx));
    const organisationId = principal.organisationId;
    if (body.role === "owner" && principal.organisationRole !== "owner") {
      throw new HttpError(403, "Only an organisation owner can invite owners.", { param: "role", code: "forbidden" });
    }
    if (await userStore(records(ctx)).get(organisationId, body.email)) {
      throw conflict(`A user with email '${body.email}' already exists in this organisation.`, "email");
    }
    const workspaces: InviteWorkspace[] = [];
    for (const [index, entry] of body.workspaces.entries()) {
      const workspace = await workspaceStore(records(ctx)).get(organisationId, entry.id);
      if (!workspace) throw badRequest(`No workspace '${entry.id}'.`, `workspaces[${index}].id`, "workspace_not_found");
      if (!workspaces.some((known) => known.id === workspace.id))
        workspaces.push({ id: workspace.id, role: entry.role });
    }
    await releaseExpiredInvite(ctx, organisationId, body.email);
    const store = inviteStore(records(ctx));
    const expiresAt = nowSeconds() + inviteTtlSeconds(ctx);
    const invite = await store.create(organisationId, {
      slug: body.email,
      email: body.email,
      role: body.role,
      workspaces,
      workspace_api_key_details: body.workspace_api_key_details,
      status: "pending",
      tokenHash: "",
      expiresAt,
      invitedBy: { keyId: principal.keyId, userId: principal.userId },
    });
    const { token, hash } = await issueInviteToken(records(ctx), invite);
    const stored = await store.update(invite, { tokenHash: hash });
    await writeAudit(ctx, {
      action: "create",
      resourceType: "invite",
      resourceId: invite.id,
      after: presentInvite(stored),
    });
    return json({ ...presentInvite(stored), token, accept_url: acceptUrl(request, ctx, token) }, { status: 201 });
  },

  async getInvite(_request, ctx) {
    return json(presentInvite(await loadInvite(ctx, ctx.params.id!)));
  },

  async resendInvite(request, ctx) {
    const current = await loadInvite(ctx, ctx.params.id!);
    const status = inviteStatus(current);
    if (status === "accepted" || status === "revoked") {
      throw new HttpError(409, `The invite is ${status}; create a new one.`, { code: `invite_${status}` });
    }
    const store = inviteStore(records(ctx));
    const expiresAt = nowSeconds() + inviteTtlSeconds(ctx);
    const { token, hash } = await issueInviteToken(records(ctx), {
      id: current.id,
      organisationId: current.organisationId,
      expiresAt,
    });
    // An expired invite may have given its email back: claim it again (409 if a newer invite holds it).
    const updated = await store.update(current, {
      tokenHash: hash,
      expiresAt,
      resentAt: nowSeconds(),
      slug: current.email,
    });
    await deleteInviteToken(records(ctx), current.tokenHash);
    await writeAudit(ctx, {
      action: "resend",
      resourceType: "invite",
      resourceId: current.id,
      before: presentInvite(current),
      after: presentInvite(updated),
    });
    return json({ ...presentInvite(updated), token, accept_url: acceptUrl(request, ctx, token) });
  },

  async deleteInvite(_request, ctx) {
    const current = await loadInvite(ctx, ctx.params.id!);
    if (current.status === "accepted")
      throw new HttpError(409, "The invite was already accepted.", { code: "invite_accepted" });
    const updated = await inviteStore(records(ctx)).update(current, { status: "revoked", slug: undefined });
    await writeAudit(ctx, {
      action: "revoke",
      resourceType: "invite",
      resourceId: current.id,
      before: presentInvite(current),
      after: presentInvite(updated),
    });
    return json({ id: current.id, object: "invite", deleted: true, status: "revoked" });
  },

  /** Public: the invitee proves the invite with its token. Single use; expired or revoked invites are refused. */
  async acceptInvite(request, ctx) {
    const queryToken = new URL(request.url).searchParams.get("token") ?? undefined;
    // The body may be absent when the token comes in the query (the accept URL); malformed JSON is still a 400.
    const text = await readText(request, bodyLimit(ctx));
    let raw: unknown = {};
    if (text.trim() !== "") {
      try {
        raw = JSON.parse(text);
      } catch {
        throw badRequest("The request body is not valid JSON.", null, "invalid_json");
      }
    }
    const body = validate(inviteAcceptSchema, raw);
    const token = body.token ?? queryToken;
    if (!token) throw badRequest("'token' is required.", "token", "missing_required_parameter");
    const invite = await findInviteByToken(records(ctx), token);
    if (!invite)
      throw new HttpError(404, "Unknown or superseded invite token.", { param: "token", code: "invite_not_found" });
    const status = inviteStatus(invite);
    if (status !== "pending") {
      throw new HttpError(410, `The invite is ${status === "accepted" ? "already used" : status}.`, {
        param: "token",
        code: `invite_${status}`,
      });
    }
    const users = userStore(records(ctx));
    if (await users.get(invite.organisationId, invite.email)) {
      throw conflict(`A user with email '${invite.email}' already exists in this organisation.`, "email");
    }
    // Claim the invite first (version-checked): of two concurrent accepts, one gets 409 here.
    const store = inviteStore(records(ctx));
    const claimed = await store.update(invite, { status: "accepted", slug: undefined, acceptedAt: nowSeconds() });
    let user: User;
    try {
      user = await users.create(invite.organisationId, {
        slug: invite.email,
        email: invite.email,
        name: body.name ?? ([body.first_name, body.last_name].filter(Boolean).join(" ") || null),
        first_name: body.first_name ?? null,
        last_name: body.last_name ?? null,
        role: invite.role,
      });
    } catch (error) {
      await store.update(claimed, { status: "pending", slug: invite.email, acceptedAt: undefined }).catch(() => {});
      throw error;
    }
    // The token record stays until its ttl, so a second use answers 410 `invite_accepted` rather than 404.
    await store.update(claimed, { acceptedUserId: user.id });

    const organisation = await getOrganisation(records(ctx), invite.organisationId);
    const joined: JoinResult[] = [];
    for (const entry of invite.workspaces) {
      const workspace = await workspaceStore(records(ctx)).get(invite.organisationId, entry.id);
      if (!workspace) continue; // deleted since the invite was made
      const keyDetails = invite.workspace_api_key_details as { name?: string; scopes?: string[] } | undefined;
      joined.push(await joinWorkspace(records(ctx), { organisation, workspace, user, role: entry.role, keyDetails }));
    }
    const actor: Principal = {
      kind: "jwt",
      organisationId: invite.organisationId,
      userId: user.id,
      userEmail: user.email,
      organisationRole: user.role,
      scopes: [],
    };
    const presented = presentUser(
      user,
      joined.map((entry) => entry.membership),
    );
    await writeAudit(
      { ...ctx, principal: actor },
      {
        action: "accept_invite",
        resourceType: "user",
        resourceId: user.id,
        after: { ...presented, invite_id: invite.id },
      },
    );
    return json(
      { ...presented, invite_id: invite.id, api_keys: joined.flatMap((entry) => (entry.apiKey ? [entry.apiKey] : [])) },
      { status: 201 },
    );
  },
};
