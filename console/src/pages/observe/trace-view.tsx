import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import { formatCost, formatMs, formatTime } from "../../format.ts";
import { href } from "../../router.ts";
import { Button, ErrorBanner, Field, useAsync } from "../../ui/index.ts";
import type { TraceAnswer, TraceSpan } from "./log-types.ts";
import { StatusBadge } from "./status-badge.tsx";

/** The spans of one trace id as a tree, each with a bar placing it on the trace's timeline; feedback on the trace. */
export function TraceView({ traceId }: { traceId: string }) {
  const trace = useAsync(() => api<TraceAnswer>(`/v1/logs/traces/${encodeURIComponent(traceId)}`), [traceId]);
  if (trace.error) return <ErrorBanner error={trace.error} />;
  if (!trace.data) return <p aria-busy="true">Loading…</p>;
  const all = flatten(trace.data.spans);
  const start = Math.min(...all.map((span) => Date.parse(span.log.createdAt)));
  const end = Math.max(...all.map((span) => Date.parse(span.log.createdAt) + span.log.latencyMs));
  const timeline = { start, length: Math.max(1, end - start) };
  const cost = all.reduce((sum, span) => sum + (span.log.cost ?? 0), 0);
  return (
    <article aria-labelledby="trace-title">
      <p>
        <a href={href("/logs")}>← All logs</a>
      </p>
      <h1 id="trace-title">
        Trace <code>{traceId}</code>
      </h1>
      <p class="muted">
        {all.length} span{all.length === 1 ? "" : "s"}, {formatMs(end - start)}, {formatCost(cost)}
        {trace.data.truncated ? " (first 1000 spans)" : ""}
      </p>
      <ul class="trace-tree" aria-label="Spans">
        {trace.data.spans.map((span) => (
          <SpanNode key={span.log.id} span={span} timeline={timeline} />
        ))}
      </ul>
      <FeedbackForm traceId={traceId} />
    </article>
  );
}

function flatten(spans: TraceSpan[]): TraceSpan[] {
  return spans.flatMap((span) => [span, ...flatten(span.children)]);
}

function SpanNode({ span, timeline }: { span: TraceSpan; timeline: { start: number; length: number } }) {
  const offset = Date.parse(span.log.createdAt) - timeline.start;
  const left = (offset / timeline.length) * 100;
  const width = Math.max(0.5, (span.log.latencyMs / timeline.length) * 100);
  return (
    <li>
      <div class="span-row">
        <a class="span-name" href={href(`/logs/${encodeURIComponent(span.log.id)}`)}>
          {span.span_name ?? span.log.route} <StatusBadge status={span.log.status} />
        </a>
        <span class="span-meta muted">
          +{formatMs(offset)} · {formatMs(span.log.latencyMs)} ·{" "}
          {span.log.answeredModel ?? span.log.requestedModel ?? ""} {formatCost(span.log.cost)}
        </span>
        <div
          class="span-bar"
          role="img"
          aria-label={`Starts at +${formatMs(offset)}, lasts ${formatMs(span.log.latencyMs)}`}
        >
          <div class="span-bar-fill" style={{ marginLeft: `${left}%`, width: `${Math.min(width, 100 - left)}%` }} />
        </div>
      </div>
      {span.children.length > 0 && (
        <ul>
          {span.children.map((child) => (
            <SpanNode key={child.log.id} span={child} timeline={timeline} />
          ))}
        </ul>
      )}
    </li>
  );
}

/** POST /v1/feedback: a value from -10 to 10 and a weight from 0 to 1 on the whole trace. */
function FeedbackForm({ traceId }: { traceId: string }) {
  const [value, setValue] = useState("1");
  const [weight, setWeight] = useState("1");
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSent(null);
    try {
      await api("/v1/feedback", {
        method: "POST",
        body: { trace_id: traceId, value: Number(value), weight: Number(weight) },
      });
      setSent(`Feedback ${value} recorded at ${formatTime(new Date().toISOString())}.`);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    // noValidate: the gateway validates (one source of truth) and its 400 names the field.
    <form class="card" onSubmit={submit} aria-labelledby="feedback-title" noValidate>
      <h2 id="feedback-title">Feedback on this trace</h2>
      <div class="toolbar">
        <Field label="Value (-10 to 10)">
          {({ id }) => (
            <input
              id={id}
              type="number"
              min={-10}
              max={10}
              step={1}
              value={value}
              onInput={(event) => setValue(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Weight (0 to 1)">
          {({ id }) => (
            <input
              id={id}
              type="number"
              min={0}
              max={1}
              step="any"
              value={weight}
              onInput={(event) => setWeight(event.currentTarget.value)}
            />
          )}
        </Field>
        <Button type="submit" variant="primary" busy={busy}>
          Send feedback
        </Button>
      </div>
      <ErrorBanner error={error} />
      {sent && (
        <p role="status" class="ok">
          {sent}
        </p>
      )}
    </form>
  );
}
