import { listResponse, readListQuery } from "../../http/lists.ts";
import * as policies from "../../control/policies/service.ts";
import type { PolicyDeps } from "../../control/policies/service.ts";
import type { Handler, HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { badRequest } from "../../http/errors.ts";
import { json, readBody } from "../../http/json.ts";
import type { PolicyFamily } from "../../inference/policies/model.ts";
import {
  rateCreateSchema,
  rateUpdateSchema,
  usageCreateSchema,
  usageUpdateSchema,
} from "../../inference/policies/requests.ts";

/**
 * Usage-limit and rate-limit policies (`/v2/policies/{usage-limits,rate-limits}`, also under /v1): parse,
 * call core/control/policies/service.ts, shape the answer.
 */

const deps = (ctx: RequestContext): PolicyDeps => ({
  records: ctx.services.stores.records,
  counters: ctx.services.stores.counters,
  traceId: ctx.traceId,
  policyChanged: (organisationId, policy, removedId) =>
    ctx.services.policies.changed(organisationId, policy, removedId),
});
const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;

async function readCreate(request: Request, ctx: RequestContext, family: PolicyFamily): Promise<policies.PolicyCreate> {
  return family === "usage_limits"
    ? { family, body: await readBody(request, usageCreateSchema, bodyLimit(ctx)) }
    : { family, body: await readBody(request, rateCreateSchema, bodyLimit(ctx)) };
}

/** The update of the addressed policy; its body is read once the service has checked access. */
function updateOf(request: Request, ctx: RequestContext, family: PolicyFamily): policies.PolicyUpdate {
  const id = ctx.params.id!;
  return family === "usage_limits"
    ? { id, family, body: () => readBody(request, usageUpdateSchema, bodyLimit(ctx)) }
    : { id, family, body: () => readBody(request, rateUpdateSchema, bodyLimit(ctx)) };
}

type FamilyHandlers = Record<"create" | "list" | "get" | "update" | "remove" | "usage", Handler>;

function familyHandlers(family: PolicyFamily): FamilyHandlers {
  return {
    async create(request, ctx) {
      const input = await readCreate(request, ctx, family);
      return json(await policies.createPolicy(deps(ctx), ctx.principal!, input), { status: 201 });
    },

    async list(request, ctx) {
      const query = readListQuery(request);
      const apiKeyId = new URL(request.url).searchParams.get("api_key_id") ?? undefined;
      const input = { family, limit: query.limit, cursor: query.cursor, workspaceId: query.workspace_id, apiKeyId };
      return listResponse(await policies.listPolicies(deps(ctx), ctx.principal!, input));
    },

    async get(_request, ctx) {
      return json(await policies.getPolicy(deps(ctx), ctx.principal!, { family, id: ctx.params.id! }));
    },

    async update(request, ctx) {
      const input = updateOf(request, ctx, family);
      return json(await policies.updatePolicy(deps(ctx), ctx.principal!, input));
    },

    async remove(_request, ctx) {
      const removed = await policies.deletePolicy(deps(ctx), ctx.principal!, { family, id: ctx.params.id! });
      return json({ id: removed.id, object: removed.object, deleted: true, success: true });
    },

    async usage(request, ctx) {
      const query = async () => {
        const params = new URL(request.url).searchParams;
        const limit = Number(params.get("limit") ?? "100");
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
          throw badRequest("'limit' must be an integer from 1 to 1000.", "limit", "invalid_value");
        return { limit, cursor: params.get("cursor") ?? undefined };
      };
      const usage = await policies.policyUsage(deps(ctx), ctx.principal!, { family, id: ctx.params.id!, query });
      const iso = (seconds: number | undefined) =>
        seconds === undefined ? null : new Date(seconds * 1000).toISOString();
      return json({
        object: "list",
        policy_id: usage.policyId,
        type: usage.type,
        window_start: iso(usage.windowStart || undefined),
        resets_at: iso(usage.resetsAt),
        data: usage.items,
        has_more: usage.cursor !== undefined,
        next_cursor: usage.cursor ?? null,
      });
    },
  };
}

const usage = familyHandlers("usage_limits");
const rate = familyHandlers("rate_limits");

export const handlers: HandlerMap = {
  createUsageLimitPolicy: usage.create,
  listUsageLimitPolicies: usage.list,
  getUsageLimitPolicy: usage.get,
  updateUsageLimitPolicy: usage.update,
  deleteUsageLimitPolicy: usage.remove,
  getUsageLimitPolicyUsage: usage.usage,
  createRateLimitPolicy: rate.create,
  listRateLimitPolicies: rate.list,
  getRateLimitPolicy: rate.get,
  updateRateLimitPolicy: rate.update,
  deleteRateLimitPolicy: rate.remove,
  getRateLimitPolicyUsage: rate.usage,
};
