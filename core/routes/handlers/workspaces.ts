import * as workspaces from "../../control/workspaces/service.ts";
import type { WorkspaceDeps } from "../../control/workspaces/service.ts";
import { listResponse, readListQuery } from "../../http/lists.ts";
import {
  memberAddSchema,
  memberUpdateSchema,
  workspaceCreateSchema,
  workspaceUpdateSchema,
} from "../../control/workspaces/schemas.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { json, readBody } from "../../http/json.ts";

/**
 * Workspaces (`/v1/admin/workspaces`, and the spec's `GET|PUT /v2/workspaces/{id}`) and their members
 * (`/v1/admin/workspaces/{id}/users`): parse, call core/control/workspaces/service.ts, shape the answer.
 */

const deps = (ctx: RequestContext): WorkspaceDeps => ({
  records: ctx.services.stores.records,
  traceId: ctx.traceId,
  organisationChanged: (organisationId) => ctx.services.orgSettings.forget(organisationId),
});
const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;

export const handlers: HandlerMap = {
  async listWorkspaces(request, ctx) {
    const query = readListQuery(request);
    const name = new URL(request.url).searchParams.get("name") ?? undefined;
    return listResponse(await workspaces.listWorkspaces(deps(ctx), ctx.principal!, { ...query, name }));
  },

  async createWorkspace(request, ctx) {
    const body = () => readBody(request, workspaceCreateSchema, bodyLimit(ctx));
    return json(await workspaces.createWorkspace(deps(ctx), ctx.principal!, body), { status: 201 });
  },

  async getWorkspace(_request, ctx) {
    return json(await workspaces.getWorkspace(deps(ctx), ctx.principal!, { workspace: ctx.params.id! }));
  },

  async updateWorkspace(request, ctx) {
    const changes = () => readBody(request, workspaceUpdateSchema, bodyLimit(ctx));
    return json(await workspaces.updateWorkspace(deps(ctx), ctx.principal!, { workspace: ctx.params.id!, changes }));
  },

  async deleteWorkspace(_request, ctx) {
    const { id } = await workspaces.deleteWorkspace(deps(ctx), ctx.principal!, { workspace: ctx.params.id! });
    return json({ id, object: "workspace", deleted: true });
  },

  async listWorkspaceMembers(request, ctx) {
    const query = async () => {
      const role = new URL(request.url).searchParams.get("role") ?? undefined;
      return { ...readListQuery(request), role };
    };
    const input = { workspace: ctx.params.id!, query };
    return listResponse(await workspaces.listWorkspaceMembers(deps(ctx), ctx.principal!, input));
  },

  /** One user (`user_id` or `email`) answers the member; a `users` list answers a list. */
  async addWorkspaceMembers(request, ctx) {
    let list = false;
    const members = async () => {
      const body = await readBody(request, memberAddSchema, bodyLimit(ctx));
      if (!("users" in body))
        return [{ user: body.user_id ?? body.email, role: body.role, param: body.user_id ? "user_id" : "email" }];
      list = true;
      return body.users.map((entry, index) => ({ user: entry.id, role: entry.role, param: `users[${index}].id` }));
    };
    const added = await workspaces.addWorkspaceMembers(deps(ctx), ctx.principal!, {
      workspace: ctx.params.id!,
      members,
    });
    if (list) return json({ object: "list", data: added, has_more: false }, { status: 201 });
    return json(added[0], { status: 201 });
  },

  async getWorkspaceMember(_request, ctx) {
    const input = { workspace: ctx.params.id!, user: ctx.params.userId! };
    return json(await workspaces.getWorkspaceMember(deps(ctx), ctx.principal!, input));
  },

  async updateWorkspaceMember(request, ctx) {
    const role = async () => (await readBody(request, memberUpdateSchema, bodyLimit(ctx))).role;
    const input = { workspace: ctx.params.id!, user: ctx.params.userId!, role };
    return json(await workspaces.updateWorkspaceMember(deps(ctx), ctx.principal!, input));
  },

  async removeWorkspaceMember(_request, ctx) {
    const input = { workspace: ctx.params.id!, user: ctx.params.userId! };
    const { id } = await workspaces.removeWorkspaceMember(deps(ctx), ctx.principal!, input);
    return json({ id, object: "workspace_member", deleted: true });
  },
};
