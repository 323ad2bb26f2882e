import { useState } from "preact/hooks";
import type { PageProps } from "../../pages.ts";
import { replaceQuery } from "../../router.ts";
import { Button, type Column, Dialog, Field } from "../../ui/index.ts";
import { isoFromLocal, when } from "./format.ts";
import { pretty } from "./json-editor.tsx";
import { ListTable } from "./list-table.tsx";
import { useList } from "./use-list.ts";

/** An audit entry as `GET /v1/audit-logs` answers it (core/control/organisation/service.ts presentAudit). */
interface AuditEntry {
  id: string;
  created_at: string;
  action: string;
  resource_type: string;
  resource_id: string;
  workspace_id: string | null;
  actor: { type: string | null; api_key_id: string | null; user_id: string | null; email: string | null };
  before: unknown;
  after: unknown;
  trace_id: string | null;
}

/** The filters `GET /v1/audit-logs` takes, with their labels; `from`/`to` are times. */
const TEXT_FILTERS: Array<[string, string]> = [
  ["resource_type", "Resource type"],
  ["action", "Action"],
  ["resource_id", "Resource id"],
  ["workspace_id", "Workspace id"],
  ["actor_key_id", "Actor API key id"],
  ["actor_user_id", "Actor user id"],
];

/** `datetime-local` text of an ISO time (the inputs show local time). */
const localOf = (iso: string | null) => {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/** `#/audit-logs?resource_type=api_key&from=...`: every change, newest first; the filters live in the URL. */
export default function AuditLogsPage({ query }: PageProps) {
  const applied = Object.fromEntries(
    [...TEXT_FILTERS.map(([name]) => name), "from", "to"].map((name) => [name, query.get(name) ?? ""]),
  );
  const [draft, setDraft] = useState<Record<string, string>>({
    ...applied,
    from: localOf(applied.from),
    to: localOf(applied.to),
  });
  const list = useList<AuditEntry>("/v1/audit-logs", applied);
  const [open, setOpen] = useState<AuditEntry | null>(null);

  const apply = (event: Event) => {
    event.preventDefault();
    replaceQuery({ ...draft, from: isoFromLocal(draft.from ?? ""), to: isoFromLocal(draft.to ?? "") });
  };
  const columns: Column<AuditEntry>[] = [
    { header: "Time", cell: (entry) => when(entry.created_at) },
    { header: "Action", cell: (entry) => entry.action },
    { header: "Resource", cell: (entry) => `${entry.resource_type} ${entry.resource_id}` },
    {
      header: "Actor",
      cell: (entry) => entry.actor.email ?? entry.actor.user_id ?? entry.actor.api_key_id ?? entry.actor.type ?? "—",
      wide: true,
    },
    { header: "Workspace", cell: (entry) => entry.workspace_id ?? "—", wide: true },
  ];
  return (
    <section class="manage-page" aria-labelledby="audit-title">
      <h1 id="audit-title">Audit logs</h1>
      <form class="toolbar" onSubmit={apply} aria-label="Audit log filters">
        {TEXT_FILTERS.map(([name, label]) => (
          <Field key={name} label={label}>
            {({ id }) => (
              <input
                id={id}
                value={draft[name] ?? ""}
                onInput={(event) => setDraft({ ...draft, [name]: event.currentTarget.value })}
              />
            )}
          </Field>
        ))}
        <Field label="From">
          {({ id }) => (
            <input
              id={id}
              type="datetime-local"
              value={draft.from ?? ""}
              onInput={(event) => setDraft({ ...draft, from: event.currentTarget.value })}
            />
          )}
        </Field>
        <Field label="To">
          {({ id }) => (
            <input
              id={id}
              type="datetime-local"
              value={draft.to ?? ""}
              onInput={(event) => setDraft({ ...draft, to: event.currentTarget.value })}
            />
          )}
        </Field>
        <Button variant="primary" type="submit">
          Apply filters
        </Button>
        <Button
          onClick={() => {
            setDraft({});
            replaceQuery({});
          }}
        >
          Clear
        </Button>
      </form>
      <ListTable
        list={list}
        rows={list.items}
        caption="Audit log entries"
        columns={columns}
        rowKey={(entry) => entry.id}
        onOpen={setOpen}
        empty="No entries match."
      />
      <Dialog
        title={open ? `${open.action} ${open.resource_type}` : ""}
        open={open !== null}
        onClose={() => setOpen(null)}
      >
        {open && (
          <>
            <p>
              {when(open.created_at)} · {open.resource_id} · by{" "}
              {open.actor.email ?? open.actor.user_id ?? open.actor.api_key_id ?? open.actor.type}
              {open.trace_id ? ` · trace ${open.trace_id}` : ""}
            </p>
            <div class="split">
              <div>
                <h3>Before</h3>
                <pre>{pretty(open.before)}</pre>
              </div>
              <div>
                <h3>After</h3>
                <pre>{pretty(open.after)}</pre>
              </div>
            </div>
          </>
        )}
      </Dialog>
    </section>
  );
}
