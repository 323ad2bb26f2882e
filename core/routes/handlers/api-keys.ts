import * as apiKeys from "../../control/api-keys/service.ts";
import { createKeySchema, keyFieldsSchema } from "../../control/api-keys/schemas.ts";
import type { Handler, HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { apiKeyDeps, controlDeps } from "../control-deps.ts";
import { json, readBody } from "../../http/json.ts";
import { listResponse, readListQuery } from "../../http/lists.ts";

/**
 * API keys (spec 4.8, 5.5): create by type/sub-type, list, batch lookup, get, update, rotate, revoke. Parse,
 * call core/control/api-keys/service.ts, shape the answer (a new secret is shown once, on create and rotate).
 */

const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const ref = (ctx: RequestContext) => ({ key: ctx.params.id! });

async function create(request: Request, ctx: RequestContext, type?: string, subType?: string): Promise<Response> {
  const body = await readBody(request, createKeySchema, bodyLimit(ctx));
  const created = await apiKeys.createKey(apiKeyDeps(ctx), ctx.principal!, { type, subType, body });
  return json({ ...created.key, key: created.secret }, { status: 201 });
}

const fixed =
  (type: string, subType: string): Handler =>
  (request, ctx) =>
    create(request, ctx, type, subType);

/** `?ids=a,b` (or repeated `ids`): the keys the caller may see among them. */
async function batchLookup(request: Request, ctx: RequestContext): Promise<Response> {
  const ids = new URL(request.url).searchParams
    .getAll("ids")
    .join(",")
    .split(",")
    .map((id) => id.trim())
    .filter(Boolean);
  const data = await apiKeys.lookupKeys(controlDeps(ctx), ctx.principal!, { ids });
  return json({ object: "list", data, total: data.length });
}

async function list(request: Request, ctx: RequestContext): Promise<Response> {
  const params = new URL(request.url).searchParams;
  if (params.has("ids")) return batchLookup(request, ctx);
  if (params.has("page_size") && !params.has("limit")) params.set("limit", params.get("page_size")!);
  const query = readListQuery(new Request(`http://x/?${params}`));
  return listResponse(await apiKeys.listKeys(controlDeps(ctx), ctx.principal!, query));
}

export const handlers: HandlerMap = {
  createOrganisationServiceKey: fixed("organisation", "service"),
  createWorkspaceUserKey: fixed("workspace", "user"),
  createWorkspaceServiceKey: fixed("workspace", "service"),
  createKeyByType: (request, ctx) => create(request, ctx, ctx.params.type, ctx.params.subType),
  createKeyFromBody: (request, ctx) => create(request, ctx),
  listKeys: list,
  batchLookupKeys: list,

  async getKey(_request, ctx) {
    return json(await apiKeys.getKey(controlDeps(ctx), ctx.principal!, ref(ctx)));
  },

  async updateKey(request, ctx) {
    const changes = () => readBody(request, keyFieldsSchema, bodyLimit(ctx));
    return json(await apiKeys.updateKey(apiKeyDeps(ctx), ctx.principal!, { ...ref(ctx), changes }));
  },

  async rotateKey(_request, ctx) {
    const rotated = await apiKeys.rotateKey(apiKeyDeps(ctx), ctx.principal!, ref(ctx));
    return json({
      ...rotated.key,
      key: rotated.secret,
      previous_key_expires_at: new Date(rotated.previousExpiresAt * 1000).toISOString(),
    });
  },

  async deleteKey(_request, ctx) {
    const { id } = await apiKeys.revokeKey(apiKeyDeps(ctx), ctx.principal!, ref(ctx));
    return json({ id, object: "api-key", deleted: true, success: true, status: "revoked" });
  },
};
