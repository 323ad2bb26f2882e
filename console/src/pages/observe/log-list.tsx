import { useEffect, useState } from "preact/hooks";
import { CONSOLE_METADATA, type ListPage, api } from "../../api.ts";
import { formatCost, formatMs, formatNumber, formatTime, fromLocalInput, toLocalInput } from "../../format.ts";
import { href, navigate, replaceQuery } from "../../router.ts";
import { useSession } from "../../session.ts";
import { Button, type Column, ErrorBanner, Field, Table, useAsync } from "../../ui/index.ts";
import type { LogEntry } from "./log-types.ts";
import { StatusBadge } from "./status-badge.tsx";

/** The filters of GET /v1/logs (core/logs/schemas.ts listLogsQuery) the page offers, as URL query names. */
const FILTERS = [
  "from",
  "to",
  "status",
  "provider",
  "model",
  "trace_id",
  "metadata_key",
  "metadata_value",
  "min_cost",
  "max_cost",
] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

const TAIL_INTERVAL_MS = 3000;

const filtersOf = (query: URLSearchParams): Filters =>
  Object.fromEntries(FILTERS.flatMap((name) => (query.get(name) ? [[name, query.get(name)!]] : [])));

const COLUMNS: Column<LogEntry>[] = [
  {
    header: "Time",
    cell: (log) => <a href={href(`/logs/${encodeURIComponent(log.id)}`)}>{formatTime(log.createdAt)}</a>,
  },
  { header: "Status", cell: (log) => <StatusBadge status={log.status} /> },
  { header: "Route", cell: (log) => <code>{log.route}</code>, wide: true },
  { header: "Provider", cell: (log) => log.provider ?? "—" },
  { header: "Model", cell: (log) => log.answeredModel ?? log.requestedModel ?? "—" },
  { header: "Tokens", cell: (log) => formatNumber(log.usage?.totalTokens), numeric: true, wide: true },
  { header: "Cost", cell: (log) => formatCost(log.cost), numeric: true },
  { header: "Latency", cell: (log) => formatMs(log.latencyMs), numeric: true, wide: true },
  {
    header: "Trace",
    cell: (log) => <a href={href(`/logs/trace/${encodeURIComponent(log.traceId)}`)}>{log.traceId.slice(0, 8)}</a>,
    wide: true,
  },
];

/** The request logs the principal may see, newest first, filtered, paged by cursor, optionally tailed live. */
export function LogList({ query }: { query: URLSearchParams }) {
  const session = useSession();
  const applied = filtersOf(query);
  const [draft, setDraft] = useState<Filters>(applied);
  const [cursors, setCursors] = useState<string[]>([]);
  const [tail, setTail] = useState(false);
  const [hideOwn, setHideOwn] = useState(true);
  const cursor = cursors.at(-1);
  const appliedKey = JSON.stringify(applied);

  useEffect(() => {
    setDraft(applied);
    setCursors([]);
  }, [appliedKey]);

  const page = useAsync(
    () =>
      api<ListPage<LogEntry>>("/v1/logs", {
        query: { ...applied, limit: 25, cursor, workspace_id: session.workspaceId ?? undefined },
      }),
    [appliedKey, cursor, session.workspaceId],
  );

  // Live tail: reload the newest page while on; older pages do not move.
  useEffect(() => {
    if (!tail || cursor) return;
    const timer = setInterval(page.reload, TAIL_INTERVAL_MS);
    return () => clearInterval(timer);
  }, [tail, cursor, page.reload]);

  function apply(event: Event) {
    event.preventDefault();
    replaceQuery(draft);
  }

  const set = (name: keyof Filters) => (event: Event) =>
    setDraft({ ...draft, [name]: (event.currentTarget as HTMLInputElement).value });
  const text = (name: keyof Filters, label: string, type = "text", extra: Record<string, string> = {}) => (
    <Field label={label}>
      {({ id }) => <input id={id} name={name} type={type} value={draft[name] ?? ""} onInput={set(name)} {...extra} />}
    </Field>
  );

  return (
    <section aria-labelledby="logs-title">
      <h1 id="logs-title">Logs</h1>
      <form class="card toolbar" onSubmit={apply} aria-label="Filter logs">
        <Field label="From">
          {({ id }) => (
            <input
              id={id}
              type="datetime-local"
              value={toLocalInput(draft.from)}
              onInput={(event) => setDraft({ ...draft, from: fromLocalInput(event.currentTarget.value) })}
            />
          )}
        </Field>
        <Field label="To">
          {({ id }) => (
            <input
              id={id}
              type="datetime-local"
              value={toLocalInput(draft.to)}
              onInput={(event) => setDraft({ ...draft, to: fromLocalInput(event.currentTarget.value) })}
            />
          )}
        </Field>
        {text("status", "Status", "number", { min: "100", max: "599", inputMode: "numeric" })}
        {text("provider", "Provider")}
        {text("model", "Model")}
        {text("trace_id", "Trace id")}
        {text("metadata_key", "Metadata key")}
        {text("metadata_value", "Metadata value")}
        {text("min_cost", "Min cost (USD)", "number", { min: "0", step: "any" })}
        {text("max_cost", "Max cost (USD)", "number", { min: "0", step: "any" })}
        <div class="toolbar-actions">
          <Button type="submit" variant="primary">
            Apply filters
          </Button>
          <Button onClick={() => replaceQuery({})}>Clear</Button>
        </div>
      </form>
      <div class="toolbar">
        <label class="checkbox">
          <input type="checkbox" checked={tail} onChange={(event) => setTail(event.currentTarget.checked)} /> Live tail
        </label>
        <label class="checkbox">
          <input type="checkbox" checked={hideOwn} onChange={(event) => setHideOwn(event.currentTarget.checked)} /> Hide
          the console's own requests
        </label>
        <Button onClick={page.reload} busy={page.loading && !tail}>
          Refresh
        </Button>
        <span class="muted" aria-live="polite">
          {tail && !cursor ? "Showing new requests as they arrive." : ""}
        </span>
      </div>
      <ErrorBanner error={page.error} />
      <Table
        caption="Request logs"
        columns={COLUMNS}
        rows={(page.data?.data ?? []).filter((log) => !hideOwn || !isConsoleCall(log))}
        rowKey={(log) => log.id}
        onOpen={(log) => navigate(`/logs/${encodeURIComponent(log.id)}`)}
        empty={page.loading ? "Loading…" : emptyText(page.data?.has_more === true)}
      />
      <nav class="pager" aria-label="Pages">
        <Button disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </Button>
        <Button
          disabled={!page.data?.has_more || !page.data.next_cursor}
          onClick={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}
        >
          Older
        </Button>
      </nav>
    </section>
  );
}

/**
 * A search reads a bounded share of the logs per page (docs/observability.md): a page may be empty and still
 * have older logs to search.
 */
const emptyText = (more: boolean) =>
  more
    ? "No requests match these filters among the logs searched so far. Older searches further back."
    : "No requests match these filters.";

const isConsoleCall = (log: LogEntry) => log.metadata?.[CONSOLE_METADATA.key] === CONSOLE_METADATA.value;
