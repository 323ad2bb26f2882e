import { revokeUserKeys } from "../../control/api-keys/service.ts";
import { listResponse, readListQuery } from "../../http/lists.ts";
import * as users from "../../control/users/service.ts";
import type { UserDeps } from "../../control/users/service.ts";
import { inviteAcceptSchema, inviteCreateSchema, userUpdateSchema } from "../../control/users/schemas.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { apiKeyDeps } from "../control-deps.ts";
import { badRequest } from "../../http/errors.ts";
import { json, readBody, readText, validate } from "../../http/json.ts";

/**
 * Users of the organisation (`/v1/admin/users`) and invites (`/v1/admin/users/invites`): parse, call
 * core/control/users/service.ts, shape the answer. An invite's token is answered with an accept URL to pass on.
 */

const deps = (ctx: RequestContext): UserDeps => ({
  records: ctx.services.stores.records,
  traceId: ctx.traceId,
  inviteTtlSeconds: ctx.services.settings.GATEWAY_INVITE_TTL_HOURS * 3600,
  revokeUserKeys: (organisationId, userId) => revokeUserKeys(apiKeyDeps(ctx), organisationId, userId),
});
const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const param = (request: Request, name: string) => new URL(request.url).searchParams.get(name) ?? undefined;

function acceptUrl(request: Request, ctx: RequestContext, token: string): string {
  const base = ctx.services.settings.GATEWAY_PUBLIC_URL ?? new URL(request.url).origin;
  return `${base.replace(/\/+$/, "")}/v1/admin/users/invites/accept?token=${encodeURIComponent(token)}`;
}

const withAcceptUrl = (request: Request, ctx: RequestContext, issued: users.IssuedInvite) => ({
  ...issued.invite,
  token: issued.token,
  accept_url: acceptUrl(request, ctx, issued.token),
});

export const handlers: HandlerMap = {
  // --- users ---------------------------------------------------------------------------------------------
  async listUsers(request, ctx) {
    const query = async () => ({
      ...readListQuery(request),
      role: param(request, "role"),
      email: param(request, "email"),
    });
    return listResponse(await users.listUsers(deps(ctx), ctx.principal!, query));
  },

  async getUser(_request, ctx) {
    return json(await users.getUser(deps(ctx), ctx.principal!, { user: ctx.params.id! }));
  },

  async updateUser(request, ctx) {
    const changes = () => readBody(request, userUpdateSchema, bodyLimit(ctx));
    return json(await users.updateUser(deps(ctx), ctx.principal!, { user: ctx.params.id!, changes }));
  },

  async deleteUser(_request, ctx) {
    const deleted = await users.deleteUser(deps(ctx), ctx.principal!, { user: ctx.params.id! });
    return json({ id: deleted.id, object: "user", deleted: true, revoked_api_keys: deleted.revokedApiKeys });
  },

  // --- invites -------------------------------------------------------------------------------------------
  async listInvites(request, ctx) {
    const query = async () => ({
      ...readListQuery(request),
      status: param(request, "status"),
      role: param(request, "role"),
      email: param(request, "email"),
    });
    return listResponse(await users.listInvites(deps(ctx), ctx.principal!, query));
  },

  async createInvite(request, ctx) {
    const body = () => readBody(request, inviteCreateSchema, bodyLimit(ctx));
    const issued = await users.createInvite(deps(ctx), ctx.principal!, body);
    return json(withAcceptUrl(request, ctx, issued), { status: 201 });
  },

  async getInvite(_request, ctx) {
    return json(await users.getInvite(deps(ctx), ctx.principal!, { invite: ctx.params.id! }));
  },

  async resendInvite(request, ctx) {
    const issued = await users.resendInvite(deps(ctx), ctx.principal!, { invite: ctx.params.id! });
    return json(withAcceptUrl(request, ctx, issued));
  },

  async deleteInvite(_request, ctx) {
    const { id } = await users.revokeInvite(deps(ctx), ctx.principal!, { invite: ctx.params.id! });
    return json({ id, object: "invite", deleted: true, status: "revoked" });
  },

  /** Public: the token comes in the body or in the query (the accept URL); the body may then be absent. */
  async acceptInvite(request, ctx) {
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
    const accepted = await users.acceptInvite(deps(ctx), { ...body, token: body.token ?? param(request, "token") });
    return json({ ...accepted.user, invite_id: accepted.inviteId, api_keys: accepted.apiKeys }, { status: 201 });
  },
};
