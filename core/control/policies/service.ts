import type { Principal } from "../../auth/principal.ts";
import { workspaceScope } from "../../auth/scopes.ts";
import {
  type PolicyFamily,
  type PolicyResource,
  compilePolicy,
  groupIndexPk,
  policyStore,
  presentPolicy,
} from "../../inference/policies/model.ts";
import {
  type RateCreate,
  type RateUpdate,
  type UsageCreate,
  type UsageUpdate,
  rateFields,
  usageFields,
} from "../../inference/policies/requests.ts";
import type { Counters, Page } from "../../store/ports.ts";
import { type ControlDeps, audit } from "../deps.ts";
import { NotFound } from "../errors.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import { type PageRequest, readPage } from "../paging.ts";
import { assertWritable, boundWorkspace } from "../credentials/credentials.ts";

/**
 * Usage-limit and rate-limit policies (spec 2.11, 3, 8): CRUD and current consumption per group. Admin keys
 * manage every policy; workspace keys only their workspace's (another workspace's policy is NotFound).
 * Changes reach this process's enforcer at once (`policyChanged`) and other processes within seconds.
 */

export interface PolicyDeps extends ControlDeps {
  counters: Counters;
  /** Tells this process's enforcer (core/inference/policies/enforcer.ts) that a policy was written or removed. */
  policyChanged(organisationId: string, policy: PolicyResource | undefined, removedId?: string): void;
}

export type PolicyView = ReturnType<typeof presentPolicy>;

/** A create body, parsed by its family's schema (core/inference/policies/requests.ts). */
export type PolicyCreate = { family: "usage_limits"; body: UsageCreate } | { family: "rate_limits"; body: RateCreate };

/** An update body, parsed by its family's schema, for the policy `id` (read after the access checks). */
export type PolicyUpdate = { id: string } & (
  | { family: "usage_limits"; body: Lazy<UsageUpdate> }
  | { family: "rate_limits"; body: Lazy<RateUpdate> }
);

/** One group's consumption in the current window. */
export interface GroupUsage {
  group: unknown;
  usage: number;
  limit: number;
  remaining: number;
  exhausted: boolean;
  alert_reached?: boolean;
}

export interface PolicyUsage extends Page<GroupUsage> {
  policyId: string;
  type: PolicyResource["type"];
  /** Unix seconds; 0 for a window that never resets. */
  windowStart: number;
  /** Unix seconds; undefined for a window that never resets. */
  resetsAt?: number;
}

const RESOURCE: Record<PolicyFamily, string> = { usage_limits: "usage_limit_policy", rate_limits: "rate_limit_policy" };

/** The policy by id, if the caller may see it: NotFound for unknown ids, slugs and other workspaces' policies. */
async function visiblePolicy(
  deps: ControlDeps,
  principal: Principal,
  family: PolicyFamily,
  id: string,
): Promise<PolicyResource> {
  const store = policyStore(deps.records, family);
  const policy = store.isId(id) ? await store.get(principal.organisationId, id) : undefined;
  const bound = boundWorkspace(principal);
  if (!policy || policy.family !== family || (bound && policy.workspaceId !== bound))
    throw new NotFound(`No ${family === "usage_limits" ? "usage-limit" : "rate-limit"} policy '${id}'.`, {
      code: "policy_not_found",
    });
  return policy;
}

/** Creates a policy in the caller's workspace (workspace keys) or the one named (admin keys; none: organisation-wide). */
export async function createPolicy(deps: PolicyDeps, principal: Principal, input: PolicyCreate): Promise<PolicyView> {
  const { family, body } = input;
  const fields = input.family === "usage_limits" ? usageFields(input.body) : rateFields(input.body);
  const created = await policyStore(deps.records, family).create(principal.organisationId, {
    conditions: [],
    groupBy: [],
    ...(family === "usage_limits" ? { periodicReset: "none" as const } : {}),
    ...fields,
    family,
    type: fields.type!,
    workspaceId: workspaceScope(principal, body.workspace_id),
    status: "active",
    createdBy: principal.userId ?? principal.keyId,
  });
  deps.policyChanged(principal.organisationId, created);
  const view = presentPolicy(created);
  await audit(deps, principal, {
    action: "create",
    resourceType: RESOURCE[family],
    resourceId: created.id,
    workspaceId: created.workspaceId,
    after: view,
  });
  return view;
}

/** Workspace keys list their workspace's policies; admin keys all, or one workspace's, or one API key's. */
export async function listPolicies(
  deps: ControlDeps,
  principal: Principal,
  input: PageRequest & { family: PolicyFamily; workspaceId?: string; apiKeyId?: string },
): Promise<Page<PolicyView>> {
  const workspaceId = workspaceScope(principal, input.workspaceId);
  const page = await readPage(() =>
    policyStore(deps.records, input.family).list(principal.organisationId, {
      limit: input.limit,
      cursor: input.cursor,
      filter: (policy) =>
        (workspaceId === undefined || policy.workspaceId === workspaceId) &&
        (input.apiKeyId === undefined || policy.apiKeyId === input.apiKeyId),
    }),
  );
  return { items: page.items.map(presentPolicy), cursor: page.cursor };
}

export async function getPolicy(
  deps: ControlDeps,
  principal: Principal,
  input: { family: PolicyFamily; id: string },
): Promise<PolicyView> {
  return presentPolicy(await visiblePolicy(deps, principal, input.family, input.id));
}

/** Changes the fields given; a policy's `type` never changes. */
export async function updatePolicy(deps: PolicyDeps, principal: Principal, input: PolicyUpdate): Promise<PolicyView> {
  const policy = await visiblePolicy(deps, principal, input.family, input.id);
  assertWritable(principal, policy, "policies");
  const changes =
    input.family === "usage_limits"
      ? usageFields(await resolveLazy(input.body), policy)
      : rateFields(await resolveLazy(input.body), policy);
  const updated = await policyStore(deps.records, input.family).update(policy, changes);
  deps.policyChanged(updated.organisationId, updated);
  const view = presentPolicy(updated);
  await audit(deps, principal, {
    action: "update",
    resourceType: RESOURCE[input.family],
    resourceId: policy.id,
    workspaceId: policy.workspaceId,
    before: presentPolicy(policy),
    after: view,
  });
  return view;
}

export async function deletePolicy(
  deps: PolicyDeps,
  principal: Principal,
  input: { family: PolicyFamily; id: string },
): Promise<PolicyView> {
  const policy = await visiblePolicy(deps, principal, input.family, input.id);
  assertWritable(principal, policy, "policies");
  await policyStore(deps.records, input.family).delete(policy);
  deps.policyChanged(policy.organisationId, undefined, policy.id);
  const view = presentPolicy(policy);
  await audit(deps, principal, {
    action: "delete",
    resourceType: RESOURCE[input.family],
    resourceId: policy.id,
    workspaceId: policy.workspaceId,
    before: view,
  });
  return view;
}

/** Current consumption of each group seen in the current window, from the counters. */
export async function policyUsage(
  deps: PolicyDeps,
  principal: Principal,
  input: { family: PolicyFamily; id: string; query: Lazy<PageRequest> },
): Promise<PolicyUsage> {
  const policy = await visiblePolicy(deps, principal, input.family, input.id);
  const { limit: pageSize, cursor } = await resolveLazy(input.query);
  const compiled = compilePolicy(policy);
  const window = compiled.window(Date.now());
  const page = await readPage(() =>
    deps.records.query({ partition: groupIndexPk(policy.id, window.start), limit: pageSize, cursor }),
  );
  const keys = page.items.map((item) => String(item.counterKey));
  const values = keys.length > 0 ? await deps.counters.getMany(keys) : new Map<string, number>();
  const limit = compiled.toUnits(compiled.limit);
  const items = page.items.map((item): GroupUsage => {
    const used = compiled.toUnits(values.get(String(item.counterKey)) ?? 0);
    return {
      group: item.group,
      usage: used,
      limit,
      remaining: Math.max(0, limit - used),
      exhausted: used >= limit,
      ...(input.family === "usage_limits" && policy.alertThreshold !== undefined
        ? { alert_reached: used >= policy.alertThreshold }
        : {}),
    };
  });
  return {
    policyId: policy.id,
    type: policy.type,
    windowStart: window.start,
    resetsAt: window.end,
    items,
    cursor: page.cursor,
  };
}
