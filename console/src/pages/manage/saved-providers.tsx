import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import { useSession } from "../../session.ts";
import { Button, type Column, Dialog } from "../../ui/index.ts";
import { ConfirmDialog } from "./confirm-dialog.tsx";
import { CredentialForm, type SavedProvider } from "./credential-form.tsx";
import { when } from "./format.ts";
import { ListTable } from "./list-table.tsx";
import { useList } from "./use-list.ts";

/** How one list page (integrations or virtual keys) reads the API's answer into the form's shape. */
export interface SavedProviderKind<T> {
  title: string;
  noun: string;
  collection: "/v1/integrations" | "/v1/virtual-keys";
  providerField: "ai_provider_id" | "provider";
  noteField: "description" | "note";
  slugRequired: boolean;
  view: (item: T) => SavedProvider & { updated: string | null };
}

/** The list, create, edit and delete of saved providers (the integrations and virtual-keys pages). */
export function SavedProviders<T>({ kind }: { kind: SavedProviderKind<T> }) {
  const session = useSession();
  const list = useList<T>(kind.collection, { workspace_id: session.workspaceId ?? undefined });
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<SavedProvider | null>(null);
  const [deleting, setDeleting] = useState<SavedProvider | null>(null);
  const rows = list.items.map(kind.view);
  const path = (item: SavedProvider) => `${kind.collection}/${encodeURIComponent(item.slug)}`;
  const columns: Column<SavedProvider & { updated: string | null }>[] = [
    { header: "Name", cell: (item) => <strong>{item.name}</strong> },
    { header: "Slug", cell: (item) => <code>@{item.slug}</code> },
    { header: "Provider", cell: (item) => item.provider },
    { header: "Key", cell: (item) => <code>{item.masked_api_key ?? "—"}</code>, wide: true },
    { header: "Workspace", cell: (item) => item.workspace_id ?? "organisation", wide: true },
    { header: "Updated", cell: (item) => when(item.updated), wide: true },
    {
      header: "Actions",
      cell: (item) => (
        <span class="row-actions">
          <Button onClick={() => setEditing(item)} aria-label={`Edit ${item.name}`}>
            Edit
          </Button>
          <Button variant="danger" onClick={() => setDeleting(item)} aria-label={`Delete ${item.name}`}>
            Delete
          </Button>
        </span>
      ),
    },
  ];
  const titleId = `${kind.noun.replace(/\W+/g, "-")}-title`;
  return (
    <section class="manage-page" aria-labelledby={titleId}>
      <header class="page-header">
        <h1 id={titleId}>{kind.title}</h1>
        <Button variant="primary" onClick={() => setCreating(true)}>
          Add {kind.noun}
        </Button>
      </header>
      <ListTable
        list={list}
        caption={kind.title}
        columns={columns}
        rows={rows}
        rowKey={(item) => item.id}
        empty={`No ${kind.noun}s.`}
      />
      <Dialog title={`Add ${kind.noun}`} open={creating} onClose={() => setCreating(false)}>
        {creating && (
          <CredentialForm
            collection={kind.collection}
            providerField={kind.providerField}
            noteField={kind.noteField}
            slugRequired={kind.slugRequired}
            onSaved={() => {
              setCreating(false);
              list.reload();
            }}
          />
        )}
      </Dialog>
      <Dialog title={`Edit ${editing?.name ?? ""}`} open={editing !== null} onClose={() => setEditing(null)}>
        {editing && (
          <CredentialForm
            key={editing.id}
            collection={kind.collection}
            providerField={kind.providerField}
            noteField={kind.noteField}
            slugRequired={kind.slugRequired}
            existing={editing}
            editPath={path(editing)}
            onSaved={() => {
              setEditing(null);
              list.reload();
            }}
          />
        )}
      </Dialog>
      <ConfirmDialog
        title={`Delete ${kind.noun}`}
        open={deleting !== null}
        danger
        confirmLabel="Delete"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          await api(path(deleting!), { method: "DELETE" });
          list.reload();
        }}
      >
        <p>
          Delete {deleting?.name} (@{deleting?.slug})? Requests naming it will fail.
        </p>
      </ConfirmDialog>
    </section>
  );
}
