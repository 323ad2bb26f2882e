import { workspaceScope } from "../../auth/scopes.ts";
import { writeAudit } from "../../control/audit.ts";
import { listPage, listResponse, readListQuery } from "../../control/list-query.ts";
import { assertWritable, boundWorkspace } from "../../control/provider-credentials.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { badRequest, notFound } from "../../http/errors.ts";
import { json, readBody } from "../../http/json.ts";
import {
  type PolicyFamily,
  type PolicyResource,
  compilePolicy,
  groupIndexPk,
  policyStore,
  presentPolicy,
} from "../../policies/model.ts";
import {
  rateCreateSchema,
  rateFields,
  rateUpdateSchema,
  usageCreateSchema,
  usageFields,
  usageUpdateSchema,
} from "../../policies/requests.ts";

/**
 * Usage-limit and rate-limit policies (`/v2/policies/{usage-limits,rate-limits}`, also under /v1): CRUD and
 * current consumption per group. Admin keys manage every policy; workspace keys only their workspace's.
 * Changes apply at once in this process and within a few seconds elsewhere (core/policies/enforcer.ts).
 */

const RESOURCE: Record<PolicyFamily, string> = { usage_limits: "usage_limit_policy", rate_limits: "rate_limit_policy" };

async function visiblePolicy(ctx: RequestContext, family: PolicyFamily): Promise<PolicyResource> {
  const principal = ctx.principal!;
  const id = ctx.params.id!;
  const store = policyStore(ctx.services.stores.records, family);
  const policy = store.isId(id) ? await store.get(principal.organisationId, id) : undefined;
  const bound = boundWorkspace(principal);
  if (!policy || policy.family !== family || (bound && policy.workspaceId !== bound))
    throw notFound(
      `No ${family === "usage_limits" ? "usage-limit" : "rate-limit"} policy '${id}'.`,
      "policy_not_found",
    );
  return policy;
}

function familyHandlers(family: PolicyFamily) {
  const isUsage = family === "usage_limits";
  const max = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;

  return {
    async create(request: Request, ctx: RequestContext): Promise<Response> {
      const principal = ctx.principal!;
      const body = isUsage
        ? await readBody(request, usageCreateSchema, max(ctx))
        : await readBody(request, rateCreateSchema, max(ctx));
      const fields = isUsage ? usageFields(body as never) : rateFields(body as never);
      const created = await policyStore(ctx.services.stores.records, family).create(principal.organisationId, {
        conditions: [],
        groupBy: [],
        ...(isUsage ? { periodicReset: "none" as const } : {}),
        ...fields,
        family,
        type: fields.type!,
        workspaceId: workspaceScope(principal, body.workspace_id),
        status: "active",
        createdBy: principal.userId ?? principal.keyId,
      });
      ctx.services.policies.changed(principal.organisationId, created);
      const view = presentPolicy(created);
      await writeAudit(ctx, {
        action: "create",
        resourceType: RESOURCE[family],
        resourceId: created.id,
        workspaceId: created.workspaceId,
        after: view,
      });
      return json(view, { status: 201 });
    },

    async list(request: Request, ctx: RequestContext): Promise<Response> {
      const principal = ctx.principal!;
      const query = readListQuery(request);
      const workspaceId = workspaceScope(principal, query.workspace_id);
      const apiKeyId = new URL(request.url).searchParams.get("api_key_id") ?? undefined;
      const page = await listPage(() =>
        policyStore(ctx.services.stores.records, family).list(principal.organisationId, {
          limit: query.limit,
          cursor: query.cursor,
          filter: (policy) =>
            (workspaceId === undefined || policy.workspaceId === workspaceId) &&
            (apiKeyId === undefined || policy.apiKeyId === apiKeyId),
        }),
      );
      return listResponse(page, presentPolicy);
    },

    async get(_request: Request, ctx: RequestContext): Promise<Response> {
      return json(presentPolicy(await visiblePolicy(ctx, family)));
    },

    async update(request: Request, ctx: RequestContext): Promise<Response> {
      const policy = await visiblePolicy(ctx, family);
      assertWritable(ctx.principal!, policy, "policies");
      const body = isUsage
        ? await readBody(request, usageUpdateSchema, max(ctx))
        : await readBody(request, rateUpdateSchema, max(ctx));
      const changes = isUsage ? usageFields(body as never, policy) : rateFields(body as never, policy);
      const updated = await policyStore(ctx.services.stores.records, family).update(policy, changes);
      ctx.services.policies.changed(updated.organisationId, updated);
      const view = presentPolicy(updated);
      await writeAudit(ctx, {
        action: "update",
        resourceType: RESOURCE[family],
        resourceId: policy.id,
        workspaceId: policy.workspaceId,
        before: presentPolicy(policy),
        after: view,
      });
      return json(view);
    },

    async remove(_request: Request, ctx: RequestContext): Promise<Response> {
      const policy = await visiblePolicy(ctx, family);
      assertWritable(ctx.principal!, policy, "policies");
      await policyStore(ctx.services.stores.records, family).delete(policy);
      ctx.services.policies.changed(policy.organisationId, undefined, policy.id);
      await writeAudit(ctx, {
        action: "delete",
        resourceType: RESOURCE[family],
        resourceId: policy.id,
        workspaceId: policy.workspaceId,
        before: presentPolicy(policy),
      });
      return json({ id: policy.id, object: presentPolicy(policy).object, deleted: true, success: true });
    },

    /** Current consumption of each group seen in the current window, from the counters. */
    async usage(request: Request, ctx: RequestContext): Promise<Response> {
      const policy = await visiblePolicy(ctx, family);
      const compiled = compilePolicy(policy);
      const window = compiled.window(Date.now());
      const params = new URL(request.url).searchParams;
      const limit = Number(params.get("limit") ?? "100");
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw badRequest("'limit' must be an integer from 1 to 1000.", "limit", "invalid_value");
      const page = await listPage(() =>
        ctx.services.stores.records.query({
          partition: groupIndexPk(policy.id, window.start),
          limit,
          cursor: params.get("cursor") ?? undefined,
        }),
      );
      const keys = page.items.map((item) => String(item.counterKey));
      const values = keys.length > 0 ? await ctx.services.stores.counters.getMany(keys) : new Map<string, number>();
      const iso = (seconds: number | undefined) =>
        seconds === undefined ? null : new Date(seconds * 1000).toISOString();
      const limitUnits = compiled.toUnits(compiled.limit);
      const data = page.items.map((item) => {
        const used = compiled.toUnits(values.get(String(item.counterKey)) ?? 0);
        return {
          group: item.group,
          usage: used,
          limit: limitUnits,
          remaining: Math.max(0, limitUnits - used),
          exhausted: used >= limitUnits,
          ...(isUsage && policy.alertThreshold !== undefined ? { alert_reached: used >= policy.alertThreshold } : {}),
        };
      });
      return json({
        object: "list",
        policy_id: policy.id,
        type: policy.type,
        window_start: iso(window.start || undefined),
        resets_at: iso(window.end),
        data,
        has_more: page.cursor !== undefined,
        next_cursor: page.cursor ?? null,
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
