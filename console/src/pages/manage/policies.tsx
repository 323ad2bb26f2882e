import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import type { PageProps } from "../../pages.ts";
import { href } from "../../router.ts";
import { useSession } from "../../session.ts";
import { Button, type Column, useAsync } from "../../ui/index.ts";
import { ConfirmDialog } from "./confirm-dialog.tsx";
import { when } from "./format.ts";
import { JsonDialog } from "./json-dialog.tsx";
import { pretty } from "./json-editor.tsx";
import { ListTable } from "./list-table.tsx";
import { useList } from "./use-list.ts";

/** A policy as `/v1/policies/{usage-limits,rate-limits}` answers it (core/inference/policies/model.ts presentPolicy). */
interface Policy {
  id: string;
  name: string | null;
  description: string | null;
  workspace_id: string | null;
  conditions: Array<{ key: string; value: string | string[]; excludes?: string[] }>;
  group_by: Array<{ key: string }>;
  type: string;
  credit_limit?: number;
  alert_threshold?: number | null;
  periodic_reset?: string | null;
  /** Cost limits: what happens to a request whose model has no price (`deny`, `allow` or `estimate`). */
  unpriced?: string;
  unpriced_rate?: { input: number; output: number } | null;
  unit?: string;
  value?: number;
  status: string;
}

/** `GET .../:id/usage`: the current window's consumption, one entry per group. */
interface PolicyUsage {
  type: string;
  window_start: string | null;
  resets_at: string | null;
  data: Array<{
    group: unknown;
    usage: number;
    limit: number;
    remaining: number;
    exhausted: boolean;
    alert_reached?: boolean;
  }>;
  has_more: boolean;
}

type Family = "usage-limits" | "rate-limits";

const STARTERS: Record<Family, string> = {
  "usage-limits": pretty({
    name: "Monthly budget per key",
    type: "cost",
    credit_limit: 100,
    alert_threshold: 80,
    periodic_reset: "monthly",
    unpriced: "deny",
    conditions: [],
    group_by: [{ key: "api_key" }],
  }),
  "rate-limits": pretty({
    name: "60 requests a minute per user",
    type: "requests",
    unit: "rpm",
    value: 60,
    conditions: [],
    group_by: [{ key: "user_id" }],
  }),
};

const editable = (policy: Policy) => {
  const { id: _id, status: _status, workspace_id: _workspace, ...rest } = policy as Policy & Record<string, unknown>;
  for (const field of ["object", "organisation_id", "api_key_id", "version", "created_at", "last_updated_at"])
    delete rest[field];
  return pretty(rest);
};

const unpricedText = (policy: Policy) =>
  policy.unpriced === "estimate" && policy.unpriced_rate
    ? `estimated at $${policy.unpriced_rate.input}/$${policy.unpriced_rate.output} per 1M tokens`
    : (policy.unpriced ?? "deny");

const groupText = (group: unknown) =>
  group && typeof group === "object"
    ? Object.entries(group as Record<string, unknown>)
        .map(([key, value]) => `${key}=${value}`)
        .join(", ") || "everything"
    : String(group ?? "everything");

/** `#/policies` (usage limits) and `#/policies?kind=rate-limits`: the policies with their current consumption. */
export default function PoliciesPage({ query }: PageProps) {
  const session = useSession();
  const family: Family = query.get("kind") === "rate-limits" ? "rate-limits" : "usage-limits";
  const base = `/v1/policies/${family}`;
  const list = useList<Policy>(base, { workspace_id: session.workspaceId ?? undefined });
  const [editing, setEditing] = useState<{ policy?: Policy; text: string } | null>(null);
  const [deleting, setDeleting] = useState<Policy | null>(null);
  const columns: Column<Policy>[] = [
    { header: "Name", cell: (policy) => <strong>{policy.name ?? policy.id}</strong> },
    {
      header: "Limit",
      cell: (policy) =>
        family === "usage-limits"
          ? `${policy.credit_limit} ${policy.type}${policy.periodic_reset ? ` / ${policy.periodic_reset}` : ""}${
              policy.type === "cost" ? ` (unpriced models: ${unpricedText(policy)})` : ""
            }`
          : `${policy.value} ${policy.type} (${policy.unit})`,
    },
    { header: "Per", cell: (policy) => policy.group_by.map((group) => group.key).join(", ") || "all", wide: true },
    {
      header: "Applies to",
      cell: (policy) =>
        policy.conditions.map((condition) => `${condition.key}=${[condition.value].flat().join("|")}`).join(", ") ||
        "every request",
      wide: true,
    },
    {
      header: "Current consumption",
      cell: (policy) => <Consumption path={`${base}/${encodeURIComponent(policy.id)}/usage`} />,
    },
    {
      header: "Actions",
      cell: (policy) => (
        <span class="row-actions">
          <Button
            onClick={() => setEditing({ policy, text: editable(policy) })}
            aria-label={`Edit ${policy.name ?? policy.id}`}
          >
            Edit
          </Button>
          <Button
            variant="danger"
            onClick={() => setDeleting(policy)}
            aria-label={`Delete ${policy.name ?? policy.id}`}
          >
            Delete
          </Button>
        </span>
      ),
    },
  ];
  const workspaceBody = session.workspaceId ? { workspace_id: session.workspaceId } : {};
  return (
    <section class="manage-page" aria-labelledby="policies-title">
      <header class="page-header">
        <h1 id="policies-title">Policies</h1>
        <Button variant="primary" onClick={() => setEditing({ text: STARTERS[family] })}>
          Create {family === "usage-limits" ? "usage limit" : "rate limit"}
        </Button>
      </header>
      <nav class="tabs" aria-label="Policy kinds">
        <a class="button" href={href("/policies")} aria-current={family === "usage-limits" ? "page" : undefined}>
          Usage limits
        </a>
        <a
          class="button"
          href={href("/policies", { kind: "rate-limits" })}
          aria-current={family === "rate-limits" ? "page" : undefined}
        >
          Rate limits
        </a>
      </nav>
      <ListTable
        list={list}
        rows={list.items}
        caption={family === "usage-limits" ? "Usage-limit policies" : "Rate-limit policies"}
        columns={columns}
        rowKey={(policy) => policy.id}
        empty="No policies."
      />
      <JsonDialog
        title={editing?.policy ? `Edit ${editing.policy.name ?? editing.policy.id}` : "Create policy"}
        label="Policy (JSON)"
        hint="conditions and group_by keys: api_key, workspace_id, user_id, provider, model or metadata.<key>."
        initial={editing?.text ?? null}
        onClose={() => setEditing(null)}
        onSave={async (body) => {
          const policy = editing?.policy;
          if (policy) await api(`${base}/${encodeURIComponent(policy.id)}`, { method: "PUT", body });
          else await api(base, { method: "POST", body: { ...workspaceBody, ...body } });
          list.reload();
        }}
      />
      <ConfirmDialog
        title="Delete policy"
        open={deleting !== null}
        danger
        confirmLabel="Delete"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          await api(`${base}/${encodeURIComponent(deleting!.id)}`, { method: "DELETE" });
          list.reload();
        }}
      >
        <p>Delete the policy {deleting?.name ?? deleting?.id}? Its limit stops applying at once.</p>
      </ConfirmDialog>
    </section>
  );
}

/** One policy's consumption in its current window: a meter per group (the first few). */
function Consumption({ path }: { path: string }) {
  const usage = useAsync(() => api<PolicyUsage>(path, { query: { limit: 5 } }), [path]);
  if (usage.error) return <span class="muted">{(usage.error as Error).message}</span>;
  if (!usage.data) return <span class="muted">…</span>;
  if (usage.data.data.length === 0) return <span class="muted">nothing used yet</span>;
  return (
    <ul class="consumption">
      {usage.data.data.map((entry) => (
        <li key={groupText(entry.group)}>
          <span>
            {groupText(entry.group)}: {round(entry.usage)} / {round(entry.limit)}
            {entry.exhausted ? " (exhausted)" : entry.alert_reached ? " (alert)" : ""}
          </span>
          <meter
            class="usage-bar"
            min={0}
            max={entry.limit || 1}
            value={entry.usage}
            aria-label={`${groupText(entry.group)} used ${round(entry.usage)} of ${round(entry.limit)}`}
          />
        </li>
      ))}
      {usage.data.resets_at && <li class="muted">resets {when(usage.data.resets_at)}</li>}
    </ul>
  );
}

const round = (value: number) => Math.round(value * 10_000) / 10_000;
