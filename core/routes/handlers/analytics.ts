import * as z from "zod";
import {
  type AnalyticsFilter,
  AnalyticsReader,
  type GuardrailTotals,
  emptyGuardrailTotals,
  type Metric,
  type Totals,
  emptyTotals,
  mergeTotals,
  percentiles,
} from "../../observe/analytics/reader.ts";
import { workspaceScope } from "../../auth/scopes.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { badRequest, notFound } from "../../http/errors.ts";
import { json, validate } from "../../http/json.ts";
import { PROMPT_METADATA_KEY } from "../../features/prompts/metadata.ts";

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

const GRAPH_METRICS: Record<string, Metric> = {
  requests: "requests",
  cost: "cost",
  tokens: "tokens",
  latency: "latency",
  errors: "errors",
  "error-rate": "errors",
  "cache-hit-rate": "cache",
  cache: "cache",
  users: "users",
  feedback: "feedback",
  // The portkey-ai SDK's names (analytics.graphs.*), onto the aggregates that answer them.
  "errors-rate": "errors",
  "errors-stack": "errors",
  "users-requests": "users",
  feedbacks: "feedback",
  "feedbacks/score": "feedback",
  "feedbacks/weighted": "feedback",
  "feedbacks/ai-models": "feedback",
};

/**
 * SDK names with no data source in the aggregates (no status-code, rescue or cache-latency counters): an empty
 * series of the usual shape rather than 404, so dashboards built on them render.
 */
const EMPTY_GRAPHS: Record<string, Record<string, unknown>> = {
  "errors-status-code": { total: 0 },
  "requests-rescued": { total: 0 },
  "cache-latency": { p50: null, p90: null, p99: null },
};

const GROUPS = {
  model: "model",
  models: "model",
  provider: "provider",
  providers: "provider",
  user: "user",
  users: "user",
  workspace: "workspace",
  workspaces: "workspace",
  metadata: "metadata",
  // Runs of saved prompts, by the prompt id their logs carry as `_prompt` metadata (core/features/prompts/metadata.ts).
  prompt: "prompt",
  prompts: "prompt",
  "ai-models": "model",
} as const;

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
const usd = (micros: number) => Math.round(micros) / 1e6;
const ratio = (part: number, whole: number) => (whole ? Math.round((part / whole) * 10_000) / 10_000 : 0);

function point(metric: Metric, totals: Totals): Record<string, unknown> {
  switch (metric) {
    case "requests":
      return { total: totals.requests };
    case "cost":
      return { total: usd(totals.costMicros), avg: totals.requests ? usd(totals.costMicros / totals.requests) : 0 };
    case "tokens":
      return {
        total: totals.promptTokens + totals.completionTokens,
        prompt: totals.promptTokens,
        completion: totals.completionTokens,
      };
    case "latency": {
      const [p50, p90, p99] = percentiles(totals.latency, [0.5, 0.9, 0.99]);
      return { p50, p90, p99 };
    }
    case "errors":
      return { total: totals.errors, requests: totals.requests, rate: ratio(totals.errors, totals.requests) };
    case "cache":
      return {
        hits: totals.cacheHits,
        requests: totals.requests,
        rate: ratio(totals.cacheHits, totals.requests),
        saved_cost: usd(totals.cacheSavedMicros),
      };
    case "users":
      return { total: totals.users };
    case "feedback":
      return {
        total: totals.feedbackCount,
        avg_value: totals.feedbackWeight
          ? Math.round((totals.feedbackWeighted / totals.feedbackWeight) * 1000) / 1000
          : null,
      };
  }
}

/** A guardrail's counts as the API shows them. */
function guardrailPoint(totals: GuardrailTotals): Record<string, number> {
  return {
    runs: totals.runs,
    failed: totals.failed,
    denied: totals.denied,
    fail_rate: ratio(totals.failed, totals.runs),
    checks_run: totals.checksRun,
    checks_failed: totals.checksFailed,
    avg_latency_ms: totals.runs ? Math.round(totals.timeMicros / totals.runs) / 1000 : 0,
  };
}

/**
 * GET /v1/analytics/graphs/guardrails: per day and per guardrail, how many times guardrails ran, failed and
 * denied, the checks they ran and failed, and their average latency (daily counters: resolution is days).
 */
async function guardrailsGraph(request: Request, ctx: RequestContext): Promise<Response> {
  const { filter, query } = readFilter(request, ctx);
  const { byGuardrail, byDay } = await (await reader(ctx)).guardrails(filter);
  const days: string[] = [];
  for (let start = Math.floor(filter.from / DAY_MS) * DAY_MS; start <= filter.to; start += DAY_MS)
    days.push(new Date(start).toISOString().slice(0, 10));
  const all = emptyGuardrailTotals();
  for (const totals of byDay.values())
    for (const field of Object.keys(all) as Array<keyof GuardrailTotals>) all[field] += totals[field];
  const rows = [...byGuardrail].sort((a, b) => b[1].runs - a[1].runs || a[0].localeCompare(b[0]));
  return json({
    object: "analytics-graph",
    metric: "guardrails",
    resolution: "day",
    from: new Date(filter.from).toISOString(),
    to: new Date(filter.to).toISOString(),
    data_points: days.map((day) => ({
      timestamp: `${day}T00:00:00.000Z`,
      ...guardrailPoint(byDay.get(day) ?? emptyGuardrailTotals()),
    })),
    summary: guardrailPoint(all),
    guardrails: rows.slice(0, query.limit).map(([id, totals]) => ({ guardrail_id: id, ...guardrailPoint(totals) })),
  });
}

/** One graph by its name (a path segment, or two for the SDK's feedbacks/<view>). */
async function graph(request: Request, ctx: RequestContext, metricName: string): Promise<Response> {
  if (metricName === "guardrails") return guardrailsGraph(request, ctx);
  if (Object.hasOwn(EMPTY_GRAPHS, metricName)) return emptyGraph(request, ctx, metricName);
  // Own keys only: `__proto__` or `constructor` must not find Object.prototype's members.
  const metric = Object.hasOwn(GRAPH_METRICS, metricName) ? GRAPH_METRICS[metricName] : undefined;
  if (!metric)
    throw notFound(
      `Unknown analytics metric '${metricName}'. Known: ${[...Object.keys(GRAPH_METRICS), ...Object.keys(EMPTY_GRAPHS), "guardrails"].join(", ")}.`,
    );
  const { filter } = readFilter(request, ctx);
  const series = await (await reader(ctx)).series(filter, [metric]);
  const all = series.buckets.reduce((sum, bucket) => mergeTotals(sum, bucket.totals), emptyTotals());
  const summary = point(metric, all);
  if (metric === "users") summary.total = await (await reader(ctx)).distinctUsers(filter);
  return json({
    object: "analytics-graph",
    metric: metricName,
    resolution: series.resolution,
    from: new Date(filter.from).toISOString(),
    to: new Date(filter.to).toISOString(),
    data_points: series.buckets.map((bucket) => ({
      timestamp: new Date(bucket.start).toISOString(),
      ...point(metric, bucket.totals),
    })),
    summary,
  });
}

/** A graph with no data source: the range's buckets, each with the empty point. */
async function emptyGraph(request: Request, ctx: RequestContext, metricName: string): Promise<Response> {
  const { filter } = readFilter(request, ctx);
  const empty = EMPTY_GRAPHS[metricName]!;
  const series = await (await reader(ctx)).series(filter, ["requests"]);
  return json({
    object: "analytics-graph",
    metric: metricName,
    resolution: series.resolution,
    from: new Date(filter.from).toISOString(),
    to: new Date(filter.to).toISOString(),
    data_points: series.buckets.map((bucket) => ({ timestamp: new Date(bucket.start).toISOString(), ...empty })),
    summary: empty,
  });
}

/** Analytics (spec 4.8, Portkey's /analytics/*): graphs per metric, a summary and grouped totals. */
export const handlers: HandlerMap = {
  graph: (request, ctx) => graph(request, ctx, ctx.params.metric!),

  feedbackGraph: (request, ctx) => graph(request, ctx, `feedbacks/${ctx.params.view}`),

  async summary(request, ctx) {
    const { filter } = readFilter(request, ctx);
    const series = await (await reader(ctx)).series(filter, [
      "requests",
      "cost",
      "tokens",
      "latency",
      "errors",
      "cache",
      "feedback",
    ]);
    const all = series.buckets.reduce((sum, bucket) => mergeTotals(sum, bucket.totals), emptyTotals());
    const [p50, p90, p99] = percentiles(all.latency, [0.5, 0.9, 0.99]);
    return json({
      object: "analytics-summary",
      resolution: series.resolution,
      from: new Date(filter.from).toISOString(),
      to: new Date(filter.to).toISOString(),
      requests: all.requests,
      errors: all.errors,
      error_rate: ratio(all.errors, all.requests),
      cost: usd(all.costMicros),
      tokens: {
        total: all.promptTokens + all.completionTokens,
        prompt: all.promptTokens,
        completion: all.completionTokens,
      },
      cache_hits: all.cacheHits,
      cache_hit_rate: ratio(all.cacheHits, all.requests),
      cache_saved_cost: usd(all.cacheSavedMicros),
      latency: { p50, p90, p99 },
      users: await (await reader(ctx)).distinctUsers(filter),
      feedback: {
        total: all.feedbackCount,
        avg_value: all.feedbackWeight ? Math.round((all.feedbackWeighted / all.feedbackWeight) * 1000) / 1000 : null,
      },
    });
  },

  /** `analytics.summary.cache`: the cache's share of the range. */
  async cacheSummary(request, ctx) {
    const { filter } = readFilter(request, ctx);
    const series = await (await reader(ctx)).series(filter, ["cache"]);
    const all = series.buckets.reduce((sum, bucket) => mergeTotals(sum, bucket.totals), emptyTotals());
    return json({
      object: "analytics-summary",
      from: new Date(filter.from).toISOString(),
      to: new Date(filter.to).toISOString(),
      ...point("cache", all),
    });
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
    const rows =
      group === "prompt"
        ? await (await reader(ctx)).groups(filter, "metadata", PROMPT_METADATA_KEY)
        : await (await reader(ctx)).groups(filter, group, query.metadata_key);
    const withTokens = group === "model" || group === "provider" || group === "workspace";
    return json({
      object: "list",
      group,
      ...(group === "metadata" ? { metadata_key: query.metadata_key } : {}),
      total: rows.length,
      data: rows.slice(0, query.limit).map(([name, totals]) => ({
        [group === "metadata" ? "value" : group === "prompt" ? "prompt_id" : group]: name,
        requests: totals.requests,
        cost: usd(totals.costMicros),
        ...(withTokens
          ? {
              errors: totals.errors,
              tokens: {
                total: totals.promptTokens + totals.completionTokens,
                prompt: totals.promptTokens,
                completion: totals.completionTokens,
              },
            }
          : {}),
      })),
    });
  },
};
