import type { ComponentChildren } from "preact";
import { api } from "../../api.ts";
import { formatCost, formatMs, formatNumber, formatTime, prettyJson } from "../../format.ts";
import { href } from "../../router.ts";
import { ErrorBanner, Table, useAsync } from "../../ui/index.ts";
import type { LogEntry } from "./log-types.ts";
import { StatusBadge } from "./status-badge.tsx";

/** One request: what was asked and answered, how it was routed, what it cost. Headers come masked by the API. */
export function LogDetail({ id }: { id: string }) {
  const log = useAsync(() => api<LogEntry>(`/v1/logs/${encodeURIComponent(id)}`), [id]);
  if (log.error) return <ErrorBanner error={log.error} />;
  if (!log.data) return <p aria-busy="true">Loading…</p>;
  const entry = log.data;
  const model = entry.answeredModel ?? entry.requestedModel;
  return (
    <article aria-labelledby="log-title">
      <p>
        <a href={href("/logs")}>← All logs</a>
      </p>
      <h1 id="log-title">
        Request <code>{entry.id}</code>
      </h1>
      <dl class="facts card">
        <Fact name="Status">
          <StatusBadge status={entry.status} />
        </Fact>
        <Fact name="Time">{formatTime(entry.createdAt)}</Fact>
        <Fact name="Route">
          <code>
            {entry.method} {entry.path}
          </code>
        </Fact>
        <Fact name="Provider">{entry.provider ?? "—"}</Fact>
        <Fact name="Model">{model ?? "—"}</Fact>
        <Fact name="Cost">
          <span data-testid="log-cost">{entry.priced === false ? "unpriced" : formatCost(entry.cost)}</span>
          <CostDetails entry={entry} />
        </Fact>
        <Fact name="Tokens">
          {entry.usage
            ? `${formatNumber(entry.usage.totalTokens)} (${formatNumber(entry.usage.promptTokens)} in, ${formatNumber(entry.usage.completionTokens)} out${entry.usage.estimated ? ", estimated" : ""})`
            : "—"}
        </Fact>
        <Fact name="Latency">
          {formatMs(entry.latencyMs)}
          {entry.timeToFirstTokenMs !== undefined ? ` (first token ${formatMs(entry.timeToFirstTokenMs)})` : ""}
        </Fact>
        <Fact name="Cache">{entry.cacheStatus ?? "—"}</Fact>
        <Fact name="Retries">{entry.retryCount ?? 0}</Fact>
        <Fact name="Config target">{entry.targetPath ? <code>{entry.targetPath}</code> : "—"}</Fact>
        <Fact name="Trace">
          <a href={href(`/logs/trace/${encodeURIComponent(entry.traceId)}`)}>
            <code>{entry.traceId}</code>
          </a>
        </Fact>
        {entry.metadata && Object.keys(entry.metadata).length > 0 && (
          <Fact name="Metadata">
            {Object.entries(entry.metadata).map(([key, value]) => (
              <span key={key} class="badge">
                {key}={value}
              </span>
            ))}
          </Fact>
        )}
      </dl>
      {entry.error && (
        <div class="error-banner" role="note">
          <strong>{entry.error.message}</strong>
          {entry.error.code && <span> ({entry.error.code})</span>}
        </div>
      )}
      {entry.attempts && entry.attempts.length > 0 && (
        <section>
          <h2>Path through the config</h2>
          <Table
            caption="Upstream attempts"
            rows={entry.attempts}
            rowKey={(attempt) => `${attempt.targetPath}-${attempt.retry}`}
            columns={[
              { header: "Target", cell: (attempt) => <code>{attempt.targetPath}</code> },
              { header: "Provider", cell: (attempt) => attempt.provider },
              { header: "Retry", cell: (attempt) => attempt.retry, numeric: true },
              { header: "Status", cell: (attempt) => <StatusBadge status={attempt.status} /> },
              { header: "Latency", cell: (attempt) => formatMs(attempt.latencyMs), numeric: true },
              { header: "Error", cell: (attempt) => attempt.error ?? "", wide: true },
            ]}
          />
        </section>
      )}
      {entry.guardrails && entry.guardrails.length > 0 && (
        <section>
          <h2>Guardrails</h2>
          <Table
            caption="Guardrail verdicts"
            rows={entry.guardrails}
            rowKey={(verdict) => `${verdict.phase}-${verdict.id}`}
            columns={[
              { header: "Guardrail", cell: (verdict) => verdict.name ?? verdict.slug ?? verdict.id },
              { header: "Phase", cell: (verdict) => verdict.phase },
              {
                header: "Verdict",
                cell: (verdict) => (
                  <span class={`badge ${verdict.verdict ? "badge-ok" : "badge-error"}`}>
                    {verdict.verdict ? "passed" : verdict.deny ? "failed, denied" : "failed"}
                  </span>
                ),
              },
              {
                header: "Checks",
                cell: (verdict) =>
                  verdict.checks.map((check) => `${check.id}: ${check.verdict ? "pass" : "fail"}`).join(", "),
                wide: true,
              },
              { header: "Time", cell: (verdict) => formatMs(verdict.execution_time_ms), numeric: true },
            ]}
          />
        </section>
      )}
      {entry.headers && Object.keys(entry.headers).length > 0 && (
        <section>
          <h2>Request headers</h2>
          <Table
            caption="Request headers (secrets masked)"
            rows={Object.entries(entry.headers)}
            rowKey={([name]) => name}
            columns={[
              { header: "Header", cell: ([name]) => <code>{name}</code> },
              { header: "Value", cell: ([, value]) => <code class="break">{value}</code> },
            ]}
          />
        </section>
      )}
      <section>
        <h2>Request body</h2>
        <Body value={entry.requestBody} />
      </section>
      <section>
        <h2>Response body</h2>
        <Body value={entry.responseBody} />
      </section>
    </article>
  );
}

function Fact({ name, children }: { name: string; children: ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{name}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function Body({ value }: { value: unknown }) {
  if (value === undefined || value === null) return <p class="muted">Not recorded.</p>;
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard.
    <pre tabIndex={0}>{prettyJson(value)}</pre>
  );
}

/** What the cost is made of, and where its prices came from; or why the request could not be priced. */
function CostDetails({ entry }: { entry: LogEntry }) {
  const details = entry.costDetails;
  if (!details) return null;
  if (entry.priced === false)
    return (
      <p class="muted" data-testid="log-unpriced">
        {details.reason}
      </p>
    );
  const source = details.source;
  return (
    <div data-testid="log-cost-details">
      {details.components && (
        <ul class="plain">
          {Object.entries(details.components).map(([name, usd]) => (
            <li key={name}>
              {name.replace(/_/g, " ")}: {formatCost(usd)}
            </li>
          ))}
        </ul>
      )}
      {details.factor && (
        <p class="muted">
          × {details.factor.value} ({details.factor.why})
        </p>
      )}
      {details.note && <p class="muted">{details.note}</p>}
      {source && (
        <p class="muted">
          Prices: {source.name}
          {source.version ? ` ${source.version}` : ""}
          {source.date ? ` (${source.date})` : ""}
          {source.override ? ", with this organisation's override" : ""}
        </p>
      )}
    </div>
  );
}
