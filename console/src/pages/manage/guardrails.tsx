import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import type { PageProps } from "../../pages.ts";
import { useSession } from "../../session.ts";
import { Button, type Column } from "../../ui/index.ts";
import { ConfirmDialog } from "./confirm-dialog.tsx";
import { when } from "./format.ts";
import { JsonDialog } from "./json-dialog.tsx";
import { pretty } from "./json-editor.tsx";
import { ListTable } from "./list-table.tsx";
import { useList } from "./use-list.ts";

/** A guardrail as `/v1/guardrails` answers it (core/control/guardrails/service.ts presentGuardrail). */
interface Guardrail {
  id: string;
  slug: string | null;
  name: string;
  workspace_id: string | null;
  checks: Array<{ id: string; name?: string; is_enabled?: boolean; parameters?: unknown }>;
  actions: Record<string, unknown>;
  version: number;
  last_updated_at: string | null;
}

const STARTER = pretty({
  name: "No card numbers",
  checks: [{ id: "default.regexMatch", parameters: { rule: "\\b\\d{4}-\\d{4}-\\d{4}-\\d{4}\\b", not: true } }],
  actions: { deny: true },
});

/** What may be sent back on update: the editable fields (secrets stay masked; sent back unchanged they are kept). */
const editable = (guardrail: Guardrail) =>
  pretty({
    name: guardrail.name,
    slug: guardrail.slug ?? undefined,
    checks: guardrail.checks,
    actions: guardrail.actions,
  });

/** `#/guardrails`: saved guardrails, created and edited as JSON (checks validate their parameters on save). */
export default function GuardrailsPage(_props: PageProps) {
  const session = useSession();
  const list = useList<Guardrail>("/v1/guardrails", { workspace_id: session.workspaceId ?? undefined });
  const [editing, setEditing] = useState<{ guardrail?: Guardrail; text: string } | null>(null);
  const [deleting, setDeleting] = useState<Guardrail | null>(null);
  const columns: Column<Guardrail>[] = [
    { header: "Name", cell: (guardrail) => <strong>{guardrail.name}</strong> },
    { header: "Slug", cell: (guardrail) => <code>{guardrail.slug ?? guardrail.id}</code>, wide: true },
    {
      header: "Checks",
      cell: (guardrail) => guardrail.checks.map((check) => check.name ?? check.id).join(", "),
    },
    { header: "Denies", cell: (guardrail) => (guardrail.actions.deny ? "yes" : "no"), wide: true },
    { header: "Level", cell: (guardrail) => guardrail.workspace_id ?? "organisation", wide: true },
    { header: "Version", cell: (guardrail) => guardrail.version, numeric: true, wide: true },
    { header: "Updated", cell: (guardrail) => when(guardrail.last_updated_at), wide: true },
    {
      header: "Actions",
      cell: (guardrail) => (
        <span class="row-actions">
          <Button
            onClick={() => setEditing({ guardrail, text: editable(guardrail) })}
            aria-label={`Edit ${guardrail.name}`}
          >
            Edit
          </Button>
          <Button variant="danger" onClick={() => setDeleting(guardrail)} aria-label={`Delete ${guardrail.name}`}>
            Delete
          </Button>
        </span>
      ),
    },
  ];
  const workspaceBody = session.workspaceId ? { workspace_id: session.workspaceId } : {};
  return (
    <section class="manage-page" aria-labelledby="guardrails-title">
      <header class="page-header">
        <h1 id="guardrails-title">Guardrails</h1>
        <Button variant="primary" onClick={() => setEditing({ text: STARTER })}>
          Create guardrail
        </Button>
      </header>
      <ListTable
        list={list}
        rows={list.items}
        caption="Guardrails"
        columns={columns}
        rowKey={(guardrail) => guardrail.id}
        empty="No guardrails."
      />
      <JsonDialog
        title={editing?.guardrail ? `Edit ${editing.guardrail.name}` : "Create guardrail"}
        label="Guardrail (JSON)"
        hint={
          editing?.guardrail
            ? "A save writes a new version. Masked secrets sent back unchanged are kept."
            : `Fields: name, slug, checks[], actions${session.workspaceId ? "; created in the chosen workspace" : "; add workspace_id for a workspace's guardrail"}.`
        }
        initial={editing?.text ?? null}
        onClose={() => setEditing(null)}
        onSave={async (body) => {
          const guardrail = editing?.guardrail;
          if (guardrail) await api(`/v1/guardrails/${encodeURIComponent(guardrail.id)}`, { method: "PUT", body });
          else await api("/v1/guardrails", { method: "POST", body: { ...workspaceBody, ...body } });
          list.reload();
        }}
      />
      <ConfirmDialog
        title="Delete guardrail"
        open={deleting !== null}
        danger
        confirmLabel="Delete"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          await api(`/v1/guardrails/${encodeURIComponent(deleting!.id)}`, { method: "DELETE" });
          list.reload();
        }}
      >
        <p>Delete the guardrail {deleting?.name}? Configs that name it will fail to load.</p>
      </ConfirmDialog>
    </section>
  );
}
