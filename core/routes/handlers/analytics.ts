import * as z from "zod";
import { workspaceScope } from "../../auth/scopes.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { badRequest, notFound } from "../../http/errors.ts";
import { json, validate } from "../../http/json.ts";
import {
  EMPTY_GRAPHS,
  GRAPH_METRICS,
  GROUPS,
  KNOWN_GRAPHS,
  cacheSummary,
  emptyGraph,
  groupList,
  guardrailsGraph,
  metricGraph,
  summary,
} from "../../observe/analytics/graphs.ts";
import { type AnalyticsFilter, AnalyticsReader } from "../../observe/analytics/reader.ts";

const DAY_MS = 86_400_000;
const MAX_RANGE_DAYS = 400;

const time = z.union([z.iso.datetime({ offset: true }), z.iso.date()]);

const rangeQuery = z.looseObject({
  time_of_generation_min: time.optional(),
  time_of_generation_max: time.optional(),
  from: time.optional(),
  to: time.optional(),
  workspace_id: z.string().optional(),
  model: z.string().optional(),
  provider: z.string().optional(),
  metadata_key: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

function readFilter(request: Request, ctx: RequestContext) {
  const principal = ctx.principal!;
  const query = validate(rangeQuery, Object.fromEntries(new URL(request.url).searchParams));
  const toText = query.time_of_generation_max ?? query.to;
  const fromText = query.time_of_generation_min ?? query.from;
  const to = toText ? Date.parse(toText) : Date.now();
  const from = fromText ? Date.parse(fromText) : to - 7 * DAY_MS;
  if (from > to) throw badRequest("The range starts after it ends.", "time_of_generation_min", "invalid_range");
  if (to - from > MAX_RANGE_DAYS * DAY_MS)
    throw badRequest(`The range may span at most ${MAX_RANGE_DAYS} days.`, "time_of_generation_min", "invalid_range");
  const filter: AnalyticsFilter = {
    organisationId: principal.organisationId,
    from,
    to,
    workspaceId: workspaceScope(principal, query.workspace_id),
    model: query.model,
    provider: query.provider,
  };
  return { filter, query };
}

/** A reader over the stores, after this process's pending aggregate deltas are written. */
const reader = async (ctx: RequestContext) => {
  await ctx.services.analytics.flush();
  return new AnalyticsReader(ctx.services.stores.counters, ctx.services.stores.records);
};

/** One graph by its name (a path segment, or two for the SDK's feedbacks/<view>). */
async function graph(request: Request, ctx: RequestContext, metricName: string): Promise<Response> {
  const read = () => reader(ctx);
  if (metricName === "guardrails") {
    const { filter, query } = readFilter(request, ctx);
    return json(await guardrailsGraph(read, filter, query.limit));
  }
  if (Object.hasOwn(EMPTY_GRAPHS, metricName))
    return json(await emptyGraph(read, readFilter(request, ctx).filter, metricName));
  // Own keys only: `__proto__` or `constructor` must not find Object.prototype's members.
  const metric = Object.hasOwn(GRAPH_METRICS, metricName) ? GRAPH_METRICS[metricName] : undefined;
  if (!metric) throw notFound(`Unknown analytics metric '${metricName}'. Known: ${KNOWN_GRAPHS.join(", ")}.`);
  const { filter } = readFilter(request, ctx);
  return json(await metricGraph(read, filter, metricName, metric));
}

/** Analytics (spec 4.8, Portkey's /analytics/*): graphs per metric, a summary and grouped totals (core/observe/analytics/graphs.ts). */
export const handlers: HandlerMap = {
  graph: (request, ctx) => graph(request, ctx, ctx.params.metric!),

  feedbackGraph: (request, ctx) => graph(request, ctx, `feedbacks/${ctx.params.view}`),

  async summary(request, ctx) {
    return json(await summary(() => reader(ctx), readFilter(request, ctx).filter));
  },

  /** `analytics.summary.cache`: the cache's share of the range. */
  async cacheSummary(request, ctx) {
    return json(await cacheSummary(() => reader(ctx), readFilter(request, ctx).filter));
  },

  async groups(request, ctx) {
    const name = ctx.params.key !== undefined ? "metadata" : ctx.params.group!;
    const group = Object.hasOwn(GROUPS, name) ? GROUPS[name as keyof typeof GROUPS] : undefined;
    if (!group)
      throw notFound(
        `Unknown analytics group '${ctx.params.group}'. Known: model, provider, user, workspace, metadata, prompts.`,
      );
    const { filter, query } = readFilter(request, ctx);
    // `analytics.groups.metadata(key)` puts the key in the path.
    if (ctx.params.key) query.metadata_key = ctx.params.key;
    if (group === "metadata" && !query.metadata_key)
      throw badRequest("Grouping by metadata needs `metadata_key`.", "metadata_key");
    return json(await groupList(() => reader(ctx), filter, group, query.metadata_key, query.limit));
  },
};
