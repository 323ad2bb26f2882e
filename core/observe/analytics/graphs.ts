import { PROMPT_METADATA_KEY } from "../../features/prompts/metadata.ts";
import {
  type AnalyticsFilter,
  type AnalyticsReader,
  type GuardrailTotals,
  type Metric,
  type Totals,
  emptyGuardrailTotals,
  emptyTotals,
  mergeTotals,
  percentiles,
} from "./reader.ts";

/**
 * The analytics API's catalogue and the shapes of its answers (spec 4.8, Portkey's /analytics/*): which graph
 * names exist and which aggregate answers each, the groups, and each graph, summary and group list built from a
 * reader's totals. core/routes/handlers/analytics.ts reads the query and answers with these.
 */

const DAY_MS = 86_400_000;

/** A reader over the stores, made afresh at each read (after this process's pending deltas are written). */
export type ReadAnalytics = () => Promise<AnalyticsReader>;

export const GRAPH_METRICS: Record<string, Metric> = {
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
export const EMPTY_GRAPHS: Record<string, Record<string, unknown>> = {
  "errors-status-code": { total: 0 },
  "requests-rescued": { total: 0 },
  "cache-latency": { p50: null, p90: null, p99: null },
};

export const GROUPS = {
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

export type AnalyticsGroup = (typeof GROUPS)[keyof typeof GROUPS];

/** Every graph name, for the answer to an unknown one. */
export const KNOWN_GRAPHS = [...Object.keys(GRAPH_METRICS), ...Object.keys(EMPTY_GRAPHS), "guardrails"];

const usd = (micros: number) => Math.round(micros) / 1e6;
const tokensOf = (totals: Totals) => ({
  total: totals.promptTokens + totals.completionTokens,
  prompt: totals.promptTokens,
  completion: totals.completionTokens,
});
/** A series' buckets summed: the range's totals. */
const totalOf = (series: { buckets: Array<{ totals: Totals }> }) =>
  series.buckets.reduce((sum, bucket) => mergeTotals(sum, bucket.totals), emptyTotals());
const ratio = (part: number, whole: number) => (whole ? Math.round((part / whole) * 10_000) / 10_000 : 0);

function point(metric: Metric, totals: Totals): Record<string, unknown> {
  switch (metric) {
    case "requests":
      return { total: totals.requests };
    case "cost":
      return { total: usd(totals.costMicros), avg: totals.requests ? usd(totals.costMicros / totals.requests) : 0 };
    case "tokens":
      return tokensOf(totals);
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
export async function guardrailsGraph(read: ReadAnalytics, filter: AnalyticsFilter, limit: number) {
  const { byGuardrail, byDay } = await (await read()).guardrails(filter);
  const days: string[] = [];
  for (let start = Math.floor(filter.from / DAY_MS) * DAY_MS; start <= filter.to; start += DAY_MS)
    days.push(new Date(start).toISOString().slice(0, 10));
  const all = emptyGuardrailTotals();
  for (const totals of byDay.values())
    for (const field of Object.keys(all) as Array<keyof GuardrailTotals>) all[field] += totals[field];
  const rows = [...byGuardrail].sort((a, b) => b[1].runs - a[1].runs || a[0].localeCompare(b[0]));
  return {
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
    guardrails: rows.slice(0, limit).map(([id, totals]) => ({ guardrail_id: id, ...guardrailPoint(totals) })),
  };
}

/** The graph of one aggregate under its API name (`metricName`): a point per bucket and a summary. */
export async function metricGraph(read: ReadAnalytics, filter: AnalyticsFilter, metricName: string, metric: Metric) {
  const series = await (await read()).series(filter, [metric]);
  const summary = point(metric, totalOf(series));
  if (metric === "users") summary.total = await (await read()).distinctUsers(filter);
  return graphAnswer(metricName, filter, series, (totals) => point(metric, totals), summary);
}

/** A graph with no data source (EMPTY_GRAPHS): the range's buckets, each with the empty point. */
export async function emptyGraph(read: ReadAnalytics, filter: AnalyticsFilter, metricName: string) {
  const empty = EMPTY_GRAPHS[metricName]!;
  const series = await (await read()).series(filter, ["requests"]);
  return graphAnswer(metricName, filter, series, () => empty, empty);
}

/** A graph as the API answers it: the range and its resolution, one point per bucket, the summary. */
function graphAnswer(
  metric: string,
  filter: AnalyticsFilter,
  series: { resolution: string; buckets: Array<{ start: number; totals: Totals }> },
  pointOf: (totals: Totals) => Record<string, unknown>,
  summary: Record<string, unknown>,
) {
  return {
    object: "analytics-graph",
    metric,
    resolution: series.resolution,
    from: new Date(filter.from).toISOString(),
    to: new Date(filter.to).toISOString(),
    data_points: series.buckets.map((bucket) => ({
      timestamp: new Date(bucket.start).toISOString(),
      ...pointOf(bucket.totals),
    })),
    summary,
  };
}

/** The range's totals of every aggregate (`GET /v1/analytics/summary`). */
export async function summary(read: ReadAnalytics, filter: AnalyticsFilter) {
  const series = await (await read()).series(filter, [
    "requests",
    "cost",
    "tokens",
    "latency",
    "errors",
    "cache",
    "feedback",
  ]);
  const all = totalOf(series);
  return {
    object: "analytics-summary",
    resolution: series.resolution,
    from: new Date(filter.from).toISOString(),
    to: new Date(filter.to).toISOString(),
    requests: all.requests,
    errors: all.errors,
    error_rate: ratio(all.errors, all.requests),
    cost: usd(all.costMicros),
    tokens: tokensOf(all),
    cache_hits: all.cacheHits,
    cache_hit_rate: ratio(all.cacheHits, all.requests),
    cache_saved_cost: usd(all.cacheSavedMicros),
    latency: point("latency", all),
    users: await (await read()).distinctUsers(filter),
    feedback: point("feedback", all),
  };
}

/** `analytics.summary.cache`: the cache's share of the range. */
export async function cacheSummary(read: ReadAnalytics, filter: AnalyticsFilter) {
  const series = await (await read()).series(filter, ["cache"]);
  const all = totalOf(series);
  return {
    object: "analytics-summary",
    from: new Date(filter.from).toISOString(),
    to: new Date(filter.to).toISOString(),
    ...point("cache", all),
  };
}

/** Totals per model, provider, user, workspace, metadata value (of `metadataKey`) or saved prompt. */
export async function groupList(
  read: ReadAnalytics,
  filter: AnalyticsFilter,
  group: AnalyticsGroup,
  metadataKey: string | undefined,
  limit: number,
) {
  const rows =
    group === "prompt"
      ? await (await read()).groups(filter, "metadata", PROMPT_METADATA_KEY)
      : await (await read()).groups(filter, group, metadataKey);
  const withTokens = group === "model" || group === "provider" || group === "workspace";
  return {
    object: "list",
    group,
    ...(group === "metadata" ? { metadata_key: metadataKey } : {}),
    total: rows.length,
    data: rows.slice(0, limit).map(([name, totals]) => ({
      [group === "metadata" ? "value" : group === "prompt" ? "prompt_id" : group]: name,
      requests: totals.requests,
      cost: usd(totals.costMicros),
      ...(withTokens
        ? {
            errors: totals.errors,
            tokens: tokensOf(totals),
          }
        : {}),
    })),
  };
}
