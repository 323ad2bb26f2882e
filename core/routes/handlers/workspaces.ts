import * as z from "zod";
import type { Principal } from "../../auth/principal.ts";
import { isOrganisationWide, requireAdmin } from "../../auth/scopes.ts";
import { writeAudit } from "../../control/audit.ts";
import { joinWorkspace } from "../../control/join.ts";
import { listPage, listResponse, readListQuery } from "../../control/list-query.ts";
import {
  type Membership,
  getMembership,
  listMembers,
  removeAllMembers,
  removeMembership,
  updateMembershipRole,
} from "../../control/members.ts";
import { getOrganisation } from "../../control/organisation.ts";
import { userStore } from "../../control/users.ts";
import { workspaceRoleSchema } from "../../control/users-schemas.ts";
import {
  type Workspace,
  assertDeletable,
  normaliseDefaults,
  presentWorkspace,
  slugFromName,
  workspaceStore,
} from "../../control/workspaces.ts";
import { workspaceCreateSchema, workspaceUpdateSchema } from "../../control/workspaces-schemas.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { HttpError, badRequest, notFound } from "../../http/errors.ts";
import { json, readBody } from "../../http/json.ts";

/**
 * Workspaces (`/v1/admin/workspaces`, and the spec's `GET|PUT /v2/workspaces/{id}`) and their members
 * (`/v1/admin/workspaces/{id}/users`). Creating, changing and deleting workspaces and members is for
 * organisation admins (spec 5.5); a workspace key may read its own workspace and its members.
 */

const records = (ctx: RequestContext) => ctx.services.stores.records;
const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;

/** The workspace by id or slug; 404 when unknown or when the caller is bound to another workspace (alike). */
async function loadWorkspace(ctx: RequestContext, idOrSlug: string): Promise<Workspace> {
  const principal = ctx.principal!;
  const workspace = await workspaceStore(records(ctx)).get(principal.organisationId, idOrSlug);
  if (!workspace || !canSee(principal, workspace.id))
    throw notFound(`No workspace '${idOrSlug}'.`, "workspace_not_found");
  return workspace;
}

function canSee(principal: Principal, workspaceId: string): boolean {
  return isOrganisationWide(principal) || principal.workspaceId === workspaceId;
}

const memberAddSchema = z.union([
  z.strictObject({
    users: z
      .array(z.strictObject({ id: z.string().min(1).max(200), role: workspaceRoleSchema.default("member") }))
      .min(1)
      .max(100),
  }),
  z.strictObject({
    user_id: z.string().min(1).max(200).optional(),
    email: z.email().optional(),
    role: workspaceRoleSchema.default("member"),
  }),
]);

const memberUpdateSchema = z.strictObject({ role: workspaceRoleSchema });

async function presentMember(ctx: RequestContext, membership: Membership) {
  const user = await userStore(records(ctx)).get(membership.organisationId, membership.userId);
  return {
    object: "workspace_member",
    id: membership.userId,
    user_id: membership.userId,
    workspace_id: membership.workspaceId,
    role: membership.role,
    email: user?.email ?? null,
    name: user?.name ?? null,
    first_name: user?.first_name ?? null,
    last_name: user?.last_name ?? null,
    organisation_role: user?.role ?? null,
    created_at: new Date(membership.createdAt * 1000).toISOString(),
    last_updated_at: new Date(membership.updatedAt * 1000).toISOString(),
  };
}

async function updateWorkspace(request: Request, ctx: RequestContext): Promise<Response> {
  const principal = requireAdmin(ctx.principal);
  const store = workspaceStore(records(ctx));
  const current = await loadWorkspace(ctx, ctx.params.id!);
  const body = await readBody(request, workspaceUpdateSchema, bodyLimit(ctx));
  const changes: Partial<Workspace> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.slug !== undefined) {
    if (current.isDefault && body.slug !== current.slug)
      throw badRequest("The default workspace's slug cannot change.", "slug");
    changes.slug = body.slug;
  }
  if (body.description !== undefined) changes.description = body.description;
  if (body.name_format !== undefined) changes.name_format = body.name_format;
  if (body.user_api_key_auto_create !== undefined) changes.user_api_key_auto_create = body.user_api_key_auto_create;
  if (body.log_retention_days !== undefined) changes.log_retention_days = body.log_retention_days;
  if (body.security_settings !== undefined) {
    changes.security_settings = { ...current.security_settings, ...body.security_settings };
  }
  if (body.defaults !== undefined) {
    changes.defaults = await normaliseDefaults(
      records(ctx),
      principal.organisationId,
      current.defaults ?? {},
      body.defaults,
    );
  }
  const updated = await store.update(current, changes);
  ctx.services.orgSettings.forget(principal.organisationId);
  const presented = await presentWorkspace(records(ctx), updated);
  await writeAudit(ctx, {
    action: "update",
    resourceType: "workspace",
    resourceId: updated.id,
    workspaceId: updated.id,
    before: await presentWorkspace(records(ctx), current),
    after: presented,
  });
  return json(presented);
}

export const handlers: HandlerMap = {
  async listWorkspaces(request, ctx) {
    const principal = ctx.principal!;
    const query = readListQuery(request);
    const name = new URL(request.url).searchParams.get("name")?.toLowerCase();
    const admin = isOrganisationWide(principal);
    const page = await listPage(() =>
      workspaceStore(records(ctx)).list(principal.organisationId, {
        limit: query.limit,
        cursor: query.cursor,
        filter: (ws) => (admin || ws.id === principal.workspaceId) && (!name || ws.name.toLowerCase().includes(name)),
      }),
    );
    const data = await Promise.all(page.items.map((ws) => presentWorkspace(records(ctx), ws)));
    return listResponse({ items: data, cursor: page.cursor });
  },

  async createWorkspace(request, ctx) {
    const principal = requireAdmin(ctx.principal);
    const body = await readBody(request, workspaceCreateSchema, bodyLimit(ctx));
    const store = workspaceStore(records(ctx));
    const defaults = await normaliseDefaults(records(ctx), principal.organisationId, {}, body.defaults);
    const fields = {
      name: body.name,
      description: body.description ?? null,
      defaults,
      security_settings: body.security_settings ?? {},
      name_format: body.name_format ?? null,
      user_api_key_auto_create: body.user_api_key_auto_create ?? null,
      log_retention_days: body.log_retention_days ?? null,
    };
    let workspace: Workspace | undefined;
    if (body.slug) workspace = await store.create(principal.organisationId, { ...fields, slug: body.slug });
    for (let attempt = 0; !workspace; attempt++) {
      try {
        workspace = await store.create(principal.organisationId, { ...fields, slug: slugFromName(body.name) });
      } catch (error) {
        if (!(error instanceof HttpError && error.status === 409) || attempt >= 3) throw error;
      }
    }
    // A user creating a workspace (JWT or user key of an admin) manages it.
    if (principal.userId) {
      const user = await userStore(records(ctx)).get(principal.organisationId, principal.userId);
      if (user) {
        const organisation = await getOrganisation(records(ctx), principal.organisationId);
        await joinWorkspace(records(ctx), {
          organisation,
          workspace,
          user,
          role: "manager",
          createdBy: principal.keyId,
        });
      }
    }
    const presented = await presentWorkspace(records(ctx), workspace);
    await writeAudit(ctx, {
      action: "create",
      resourceType: "workspace",
      resourceId: workspace.id,
      workspaceId: workspace.id,
      after: presented,
    });
    return json(presented, { status: 201 });
  },

  async getWorkspace(_request, ctx) {
    const workspace = await loadWorkspace(ctx, ctx.params.id!);
    return json(await presentWorkspace(records(ctx), workspace));
  },

  updateWorkspace,

  async deleteWorkspace(_request, ctx) {
    requireAdmin(ctx.principal);
    const workspace = await loadWorkspace(ctx, ctx.params.id!);
    await assertDeletable(records(ctx), workspace);
    const before = await presentWorkspace(records(ctx), workspace);
    await workspaceStore(records(ctx)).delete(workspace);
    await removeAllMembers(records(ctx), workspace.id);
    await writeAudit(ctx, {
      action: "delete",
      resourceType: "workspace",
      resourceId: workspace.id,
      workspaceId: workspace.id,
      before,
    });
    return json({ id: workspace.id, object: "workspace", deleted: true });
  },

  async listWorkspaceMembers(request, ctx) {
    const workspace = await loadWorkspace(ctx, ctx.params.id!);
    const query = readListQuery(request);
    const role = new URL(request.url).searchParams.get("role");
    const page = await listPage(() => listMembers(records(ctx), workspace.id, query.limit, query.cursor));
    const items = await Promise.all(
      page.items.filter((m) => !role || m.role === role).map((m) => presentMember(ctx, m)),
    );
    return listResponse({ items, cursor: page.cursor });
  },

  async addWorkspaceMembers(request, ctx) {
    const principal = requireAdmin(ctx.principal);
    const workspace = await loadWorkspace(ctx, ctx.params.id!);
    const body = await readBody(request, memberAddSchema, bodyLimit(ctx));
    const users = userStore(records(ctx));
    const wanted =
      "users" in body
        ? body.users.map((entry, index) => ({ ref: entry.id, role: entry.role, param: `users[${index}].id` }))
        : [{ ref: body.user_id ?? body.email, role: body.role, param: body.user_id ? "user_id" : "email" }];
    const organisation = await getOrganisation(records(ctx), principal.organisationId);
    // Validate every user first, so a bad entry adds nobody.
    const resolved = [];
    for (const entry of wanted) {
      if (!entry.ref) throw badRequest("'user_id' is required.", "user_id", "missing_required_parameter");
      const user = await users.get(
        principal.organisationId,
        entry.ref.includes("@") ? entry.ref.toLowerCase() : entry.ref,
      );
      if (!user) throw notFound(`No user '${entry.ref}' in this organisation.`, "user_not_found");
      if (await getMembership(records(ctx), workspace.id, user.id)) {
        throw new HttpError(409, `User '${user.id}' is already a member of this workspace.`, {
          param: entry.param,
          code: "conflict",
        });
      }
      resolved.push({ user, role: entry.role });
    }
    const added = [];
    for (const { user, role } of resolved) {
      const joined = await joinWorkspace(records(ctx), {
        organisation,
        workspace,
        user,
        role,
        createdBy: principal.keyId,
      });
      const member = await presentMember(ctx, joined.membership);
      await writeAudit(ctx, {
        action: "create",
        resourceType: "workspace_member",
        resourceId: `${workspace.id}/${user.id}`,
        workspaceId: workspace.id,
        after: { ...member, api_key_id: joined.apiKey?.id },
      });
      added.push(joined.apiKey ? { ...member, api_key: joined.apiKey } : member);
    }
    if ("users" in body) return json({ object: "list", data: added, has_more: false }, { status: 201 });
    return json(added[0], { status: 201 });
  },

  async getWorkspaceMember(_request, ctx) {
    const workspace = await loadWorkspace(ctx, ctx.params.id!);
    const membership = await getMembership(records(ctx), workspace.id, ctx.params.userId!);
    if (!membership)
      throw notFound(`User '${ctx.params.userId}' is not a member of this workspace.`, "member_not_found");
    return json(await presentMember(ctx, membership));
  },

  async updateWorkspaceMember(request, ctx) {
    requireAdmin(ctx.principal);
    const workspace = await loadWorkspace(ctx, ctx.params.id!);
    const body = await readBody(request, memberUpdateSchema, bodyLimit(ctx));
    const current = await getMembership(records(ctx), workspace.id, ctx.params.userId!);
    if (!current) throw notFound(`User '${ctx.params.userId}' is not a member of this workspace.`, "member_not_found");
    const updated = await updateMembershipRole(records(ctx), current, body.role);
    const after = await presentMember(ctx, updated);
    await writeAudit(ctx, {
      action: "update",
      resourceType: "workspace_member",
      resourceId: `${workspace.id}/${current.userId}`,
      workspaceId: workspace.id,
      before: { role: current.role },
      after,
    });
    return json(after);
  },

  async removeWorkspaceMember(_request, ctx) {
    requireAdmin(ctx.principal);
    const workspace = await loadWorkspace(ctx, ctx.params.id!);
    const current = await getMembership(records(ctx), workspace.id, ctx.params.userId!);
    if (!current) throw notFound(`User '${ctx.params.userId}' is not a member of this workspace.`, "member_not_found");
    await removeMembership(records(ctx), workspace.id, current.userId);
    await writeAudit(ctx, {
      action: "delete",
      resourceType: "workspace_member",
      resourceId: `${workspace.id}/${current.userId}`,
      workspaceId: workspace.id,
      before: { user_id: current.userId, role: current.role },
    });
    return json({ id: current.userId, object: "workspace_member", deleted: true });
  },
};
