import { useMemo, useState } from "preact/hooks";
import { api } from "../../api.ts";
import { formatCost, formatMs, formatNumber, formatPercent } from "../../format.ts";
import type { PageProps } from "../../pages.ts";
import { replaceQuery } from "../../router.ts";
import { useSession } from "../../session.ts";
import { Button, ErrorBanner, Field, Table, useAsync } from "../../ui/index.ts";
import { type ChartSeries, TimeChart } from "../../ui/time-chart.tsx";
import { LedgerVsBill } from "./reconciliation.tsx";

/** Ranges the picker offers (hours back from now), and the custom one. */
const RANGES: Record<string, { label: string; hours: number }> = {
  "24h": { label: "Last 24 hours", hours: 24 },
  "7d": { label: "Last 7 days", hours: 24 * 7 },
  "30d": { label: "Last 30 days", hours: 24 * 30 },
  "90d": { label: "Last 90 days", hours: 24 * 90 },
};

interface Summary {
  requests: number;
  errors: number;
  error_rate: number;
  cost: number;
  tokens: { total: number; prompt: number; completion: number };
  cache_hits: number;
  cache_hit_rate: number;
  cache_saved_cost: number;
  latency: { p50: number | null; p90: number | null; p99: number | null };
  users: number;
  feedback: { total: number; avg_value: number | null };
}

interface Graph {
  data_points: Array<Record<string, number | null> & { timestamp: string }>;
}

interface GroupRow {
  requests: number;
  cost: number;
  errors?: number;
  tokens?: { total: number };
  [name: string]: unknown;
}

/** The graphs shown, each from GET /v1/analytics/graphs/<metric> (core/routes/handlers/analytics.ts). */
const GRAPHS: Array<{
  metric: string;
  title: string;
  lines: Array<{ field: string; label: string; color: string }>;
  format: (value: number) => string;
  range?: [number, number];
}> = [
  {
    metric: "requests",
    title: "Requests",
    lines: [{ field: "total", label: "Requests", color: "#0b5cad" }],
    format: formatNumber,
  },
  {
    metric: "errors",
    title: "Errors",
    lines: [{ field: "total", label: "Errors", color: "#b42318" }],
    format: formatNumber,
  },
  {
    metric: "cost",
    title: "Cost (USD)",
    lines: [{ field: "total", label: "Cost", color: "#1a7f37" }],
    format: formatCost,
  },
  {
    metric: "tokens",
    title: "Tokens",
    lines: [
      { field: "prompt", label: "Prompt", color: "#0b5cad" },
      { field: "completion", label: "Completion", color: "#8250df" },
    ],
    format: formatNumber,
  },
  {
    metric: "latency",
    title: "Latency percentiles",
    lines: [
      { field: "p50", label: "p50", color: "#1a7f37" },
      { field: "p90", label: "p90", color: "#bf8700" },
      { field: "p99", label: "p99", color: "#b42318" },
    ],
    format: formatMs,
  },
  {
    metric: "cache-hit-rate",
    title: "Cache hit rate",
    lines: [{ field: "rate", label: "Hit rate", color: "#0b5cad" }],
    format: formatPercent,
    range: [0, 1],
  },
  {
    metric: "users",
    title: "Users",
    lines: [{ field: "total", label: "Users", color: "#8250df" }],
    format: formatNumber,
  },
  {
    metric: "feedback",
    title: "Feedback",
    lines: [{ field: "avg_value", label: "Average value", color: "#bf8700" }],
    format: (value) => value.toFixed(2),
    range: [-10, 10],
  },
];

const GROUPS = ["model", "provider", "workspace", "metadata"] as const;

/** Requests, errors, cost, tokens, latency, cache, users and feedback over a range, with totals and groups. */
export default function AnalyticsPage({ query }: PageProps) {
  const session = useSession();
  const range = query.get("range") ?? "7d";
  const customFrom = query.get("from") ?? "";
  const customTo = query.get("to") ?? "";
  const group = (query.get("group") as (typeof GROUPS)[number] | null) ?? "model";
  const metadataKey = query.get("metadata_key") ?? "";
  const [draftKey, setDraftKey] = useState(metadataKey);

  // The range as the API takes it; "now" is fixed per choice so every request asks the same window.
  const window = useMemo(() => {
    if (range === "custom" && customFrom) {
      return {
        from: new Date(customFrom).toISOString(),
        to: customTo ? new Date(`${customTo}T23:59:59`).toISOString() : new Date().toISOString(),
      };
    }
    const hours = (RANGES[range] ?? RANGES["7d"]).hours;
    const to = Date.now();
    return { from: new Date(to - hours * 3_600_000).toISOString(), to: new Date(to).toISOString() };
  }, [range, customFrom, customTo]);
  const filter = {
    time_of_generation_min: window.from,
    time_of_generation_max: window.to,
    workspace_id: session.workspaceId ?? undefined,
  };
  const filterKey = JSON.stringify(filter);

  const summary = useAsync(() => api<Summary>("/v1/analytics/summary", { query: filter }), [filterKey]);
  const graphs = useAsync(
    () => Promise.all(GRAPHS.map((graph) => api<Graph>(`/v1/analytics/graphs/${graph.metric}`, { query: filter }))),
    [filterKey],
  );
  const groups = useAsync(
    () =>
      group === "metadata" && !metadataKey
        ? Promise.resolve(undefined)
        : api<{ data: GroupRow[] }>(
            group === "metadata"
              ? `/v1/analytics/groups/metadata/${encodeURIComponent(metadataKey)}`
              : `/v1/analytics/groups/${group}`,
            { query: filter },
          ),
    [filterKey, group, metadataKey],
  );

  const charts = useMemo(
    () =>
      graphs.data?.map((answer, index) => {
        const spec = GRAPHS[index];
        const times = answer.data_points.map((point) => Date.parse(point.timestamp) / 1000);
        const series: ChartSeries[] = spec.lines.map((line) => ({
          label: line.label,
          color: line.color,
          values: answer.data_points.map((point) => (point[line.field] ?? null) as number | null),
        }));
        return { spec, times, series };
      }),
    [graphs.data],
  );

  const setQuery = (changes: Record<string, string | undefined>) =>
    replaceQuery({
      range,
      from: customFrom,
      to: customTo,
      group,
      metadata_key: metadataKey,
      ...changes,
    });

  return (
    <section aria-labelledby="analytics-title">
      <h1 id="analytics-title">Analytics</h1>
      <fieldset class="card toolbar">
        <legend class="visually-hidden">Range</legend>
        <Field label="Range">
          {({ id }) => (
            <select id={id} value={range} onChange={(event) => setQuery({ range: event.currentTarget.value })}>
              {Object.entries(RANGES).map(([value, { label }]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
              <option value="custom">Custom</option>
            </select>
          )}
        </Field>
        {range === "custom" && (
          <>
            <Field label="From date">
              {({ id }) => (
                <input
                  id={id}
                  type="date"
                  value={customFrom}
                  onChange={(event) => setQuery({ from: event.currentTarget.value })}
                />
              )}
            </Field>
            <Field label="To date">
              {({ id }) => (
                <input
                  id={id}
                  type="date"
                  value={customTo}
                  onChange={(event) => setQuery({ to: event.currentTarget.value })}
                />
              )}
            </Field>
          </>
        )}
        <Button
          onClick={() => {
            summary.reload();
            graphs.reload();
            groups.reload();
          }}
        >
          Refresh
        </Button>
      </fieldset>

      <ErrorBanner error={summary.error} />
      {summary.data && <SummaryTiles summary={summary.data} />}

      <h2>Over time</h2>
      <ErrorBanner error={graphs.error} />
      <div class="charts">
        {charts?.map(({ spec, times, series }) => (
          <TimeChart
            key={spec.metric}
            title={spec.title}
            times={times}
            series={series}
            format={spec.format}
            range={spec.range}
          />
        ))}
      </div>

      <h2>Grouped</h2>
      <form
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          setQuery({ metadata_key: draftKey });
        }}
      >
        <Field label="Group by">
          {({ id }) => (
            <select id={id} value={group} onChange={(event) => setQuery({ group: event.currentTarget.value })}>
              {GROUPS.map((name) => (
                <option key={name} value={name}>
                  {name === "metadata" ? "Metadata key" : name[0].toUpperCase() + name.slice(1)}
                </option>
              ))}
            </select>
          )}
        </Field>
        {group === "metadata" && (
          <>
            <Field label="Metadata key">
              {({ id }) => (
                <input id={id} value={draftKey} onInput={(event) => setDraftKey(event.currentTarget.value)} />
              )}
            </Field>
            <Button type="submit">Show</Button>
          </>
        )}
      </form>
      <ErrorBanner error={groups.error} />
      <Table
        caption={`Totals by ${group}`}
        rows={groups.data?.data ?? []}
        rowKey={(row) => String(row[group === "metadata" ? "value" : group])}
        empty={group === "metadata" && !metadataKey ? "Enter a metadata key." : "No requests in this range."}
        columns={[
          {
            header: group === "metadata" ? metadataKey || "Value" : group[0].toUpperCase() + group.slice(1),
            cell: (row) => String(row[group === "metadata" ? "value" : group] ?? "—"),
          },
          { header: "Requests", cell: (row) => formatNumber(row.requests), numeric: true },
          { header: "Errors", cell: (row) => formatNumber(row.errors), numeric: true, wide: true },
          { header: "Tokens", cell: (row) => formatNumber(row.tokens?.total), numeric: true, wide: true },
          { header: "Cost", cell: (row) => formatCost(row.cost), numeric: true },
        ]}
      />
      <LedgerVsBill />
    </section>
  );
}

function SummaryTiles({ summary }: { summary: Summary }) {
  const tiles: Array<[string, string, string?]> = [
    ["Requests", formatNumber(summary.requests)],
    ["Errors", formatNumber(summary.errors), `${formatPercent(summary.error_rate)} of requests`],
    ["Cost", formatCost(summary.cost)],
    [
      "Tokens",
      formatNumber(summary.tokens.total),
      `${formatNumber(summary.tokens.prompt)} in, ${formatNumber(summary.tokens.completion)} out`,
    ],
    [
      "Latency p50",
      formatMs(summary.latency.p50),
      `p90 ${formatMs(summary.latency.p90)}, p99 ${formatMs(summary.latency.p99)}`,
    ],
    ["Cache hit rate", formatPercent(summary.cache_hit_rate), `${formatCost(summary.cache_saved_cost)} saved`],
    ["Users", formatNumber(summary.users)],
    [
      "Feedback",
      summary.feedback.avg_value === null ? "—" : summary.feedback.avg_value.toFixed(2),
      `${formatNumber(summary.feedback.total)} given`,
    ],
  ];
  return (
    <ul class="tiles" aria-label="Summary">
      {tiles.map(([label, value, note]) => (
        <li key={label} class="tile card">
          <span class="tile-label">{label}</span>
          <strong class="tile-value" data-tile={label}>
            {value}
          </strong>
          {note && <span class="tile-note muted">{note}</span>}
        </li>
      ))}
    </ul>
  );
}
