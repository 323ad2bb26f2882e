import { type ApiKeyRecord, apiKeyStore } from "../../auth/api-key-records.ts";
import { workspaceScope } from "../../auth/scopes.ts";
import {
  createKey,
  createKeySchema,
  canSee,
  keyFieldsSchema,
  presentKey,
  requireManageKey,
  revokeKey,
  rotateKey,
  updateKey,
  visibleKey,
} from "../../control/api-keys.ts";
import { writeAudit } from "../../control/audit.ts";
import { listPage, listResponse, readListQuery } from "../../control/list-query.ts";
import type { Handler, HandlerMap, RequestContext } from "../../http/context.ts";
import { badRequest } from "../../http/errors.ts";
import { json, readBody } from "../../http/json.ts";

/** API keys (spec 4.8, 5.5): create by type/sub-type, list, batch lookup, get, update, rotate, revoke. */

async function create(
  request: Request,
  ctx: RequestContext,
  type: string | undefined,
  subType: string | undefined,
): Promise<Response> {
  const body = await readBody(request, createKeySchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  const keyType = type ?? body.type;
  const keySubType = subType ?? body["sub-type"];
  if (!keyType || !keySubType)
    throw badRequest(
      "Name the key type and sub-type: POST /v1/api-keys/{type}/{sub-type}.",
      "type",
      "missing_required_parameter",
    );
  const created = await createKey(ctx, keyType, keySubType, body);
  await writeAudit(ctx, {
    action: "create",
    resourceType: "api_key",
    resourceId: created.id,
    workspaceId: created.key.workspaceId,
    after: presentKey(created.key),
  });
  // The secret is shown once, here.
  return json({ ...presentKey(created.key), key: created.secret }, { status: 201 });
}

const fixed =
  (type: string, subType: string): Handler =>
  (request, ctx) =>
    create(request, ctx, type, subType);

async function batchLookup(request: Request, ctx: RequestContext): Promise<Response> {
  const principal = ctx.principal!;
  const raw = new URL(request.url).searchParams.getAll("ids").join(",");
  const ids = [
    ...new Set(
      raw
        .split(",")
        .map((id) => id.trim())
        .filter(Boolean),
    ),
  ];
  if (ids.length === 0) throw badRequest("'ids' must list at least one key id.", "ids", "invalid_value");
  if (ids.length > 100) throw badRequest("'ids' may list at most 100 key ids.", "ids", "invalid_value");
  const store = apiKeyStore(ctx.services.stores.records);
  const found = await Promise.all(
    ids.map((id) => (store.isId(id) ? store.get(principal.organisationId, id) : undefined)),
  );
  const visible = found.filter((key): key is ApiKeyRecord => key !== undefined && canSee(principal, key));
  return json({ object: "list", data: visible.map(presentKey), total: visible.length });
}

async function list(request: Request, ctx: RequestContext): Promise<Response> {
  const principal = ctx.principal!;
  const params = new URL(request.url).searchParams;
  if (params.has("ids")) return batchLookup(request, ctx);
  if (params.has("page_size") && !params.has("limit")) params.set("limit", params.get("page_size")!);
  const query = readListQuery(new Request(`http://x/?${params}`));
  const workspaceId = workspaceScope(principal, query.workspace_id);
  const page = await listPage(() =>
    apiKeyStore(ctx.services.stores.records).list(principal.organisationId, {
      limit: query.limit,
      cursor: query.cursor,
      filter: (key) => canSee(principal, key) && (workspaceId === undefined || key.workspaceId === workspaceId),
    }),
  );
  return listResponse(page, presentKey);
}

export const handlers: HandlerMap = {
  createOrganisationServiceKey: fixed("organisation", "service"),
  createWorkspaceUserKey: fixed("workspace", "user"),
  createWorkspaceServiceKey: fixed("workspace", "service"),
  createKeyByType: (request, ctx) => create(request, ctx, ctx.params.type, ctx.params.subType),
  createKeyFromBody: (request, ctx) => create(request, ctx, undefined, undefined),
  listKeys: list,
  batchLookupKeys: (request, ctx) =>
    new URL(request.url).searchParams.has("ids") ? batchLookup(request, ctx) : list(request, ctx),

  async getKey(_request, ctx) {
    return json(presentKey(await visibleKey(ctx, ctx.params.id!)));
  },

  async updateKey(request, ctx) {
    const key = await visibleKey(ctx, ctx.params.id!);
    await requireManageKey(ctx, key);
    const body = await readBody(request, keyFieldsSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const updated = await updateKey(ctx, key, body);
    await writeAudit(ctx, {
      action: "update",
      resourceType: "api_key",
      resourceId: key.id,
      workspaceId: key.workspaceId,
      before: presentKey(key),
      after: presentKey(updated),
    });
    return json(presentKey(updated));
  },

  async rotateKey(_request, ctx) {
    const key = await visibleKey(ctx, ctx.params.id!);
    await requireManageKey(ctx, key);
    const rotated = await rotateKey(ctx, key);
    await writeAudit(ctx, {
      action: "rotate",
      resourceType: "api_key",
      resourceId: key.id,
      workspaceId: key.workspaceId,
      before: presentKey(key),
      after: presentKey(rotated.key),
    });
    return json({
      ...presentKey(rotated.key),
      key: rotated.secret,
      previous_key_expires_at: new Date(rotated.previousExpiresAt * 1000).toISOString(),
    });
  },

  async deleteKey(_request, ctx) {
    const key = await visibleKey(ctx, ctx.params.id!);
    await requireManageKey(ctx, key);
    const revoked = await revokeKey(ctx, key);
    await writeAudit(ctx, {
      action: "delete",
      resourceType: "api_key",
      resourceId: key.id,
      workspaceId: key.workspaceId,
      before: presentKey(key),
      after: presentKey(revoked),
    });
    return json({ id: key.id, object: "api-key", deleted: true, success: true, status: "revoked" });
  },
};
