import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import type { PageProps } from "../../pages.ts";
import { href, navigate } from "../../router.ts";
import { Button, type Column, Dialog, Field, Table, useAsync } from "../../ui/index.ts";
import { ConfirmDialog } from "./confirm-dialog.tsx";
import { when } from "./format.ts";
import { Problem, errorParam } from "./problem.tsx";
import { useAction } from "./use-action.ts";
import { useList } from "./use-list.ts";
import { ListTable } from "./list-table.tsx";

/** A workspace as `/v1/admin/workspaces` answers it (core/control/workspaces/store.ts presentWorkspace). */
interface Workspace {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  created_at?: string | null;
}

/** A member as `/v1/admin/workspaces/:id/users` answers it. */
interface Member {
  id: string;
  user_id: string;
  email: string | null;
  name: string | null;
  role: "manager" | "member";
  organisation_role: string | null;
  created_at: string;
}

/** `#/workspaces`: the workspaces; `#/workspaces/<id>`: one workspace and its members. */
export default function WorkspacesPage({ subpath }: PageProps) {
  return subpath ? <WorkspaceMembers id={decodeURIComponent(subpath)} /> : <WorkspaceList />;
}

function WorkspaceList() {
  const list = useList<Workspace>("/v1/admin/workspaces");
  const [creating, setCreating] = useState(false);
  const columns: Column<Workspace>[] = [
    {
      header: "Name",
      cell: (workspace) => <a href={href(`/workspaces/${encodeURIComponent(workspace.id)}`)}>{workspace.name}</a>,
    },
    { header: "Slug", cell: (workspace) => <code>{workspace.slug}</code> },
    { header: "Description", cell: (workspace) => workspace.description ?? "", wide: true },
    { header: "Created", cell: (workspace) => when(workspace.created_at), wide: true },
  ];
  return (
    <section class="manage-page" aria-labelledby="workspaces-title">
      <header class="page-header">
        <h1 id="workspaces-title">Workspaces</h1>
        <Button variant="primary" onClick={() => setCreating(true)}>
          Create workspace
        </Button>
      </header>
      <ListTable
        list={list}
        rows={list.items}
        caption="Workspaces"
        columns={columns}
        rowKey={(workspace) => workspace.id}
        empty="No workspaces."
      />
      <CreateWorkspace
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={() => {
          setCreating(false);
          list.reload();
        }}
      />
    </section>
  );
}

function CreateWorkspace(props: { open: boolean; onClose: () => void; onCreated: () => void }) {
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [description, setDescription] = useState("");
  const action = useAction();
  const param = errorParam(action.error);
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = { name, ...(slug ? { slug } : {}), ...(description ? { description } : {}) };
    if (await action.run(() => api("/v1/admin/workspaces", { method: "POST", body }))) {
      setName("");
      setSlug("");
      setDescription("");
      props.onCreated();
    }
  };
  return (
    <Dialog
      title="Create workspace"
      open={props.open}
      onClose={() => {
        action.clear();
        props.onClose();
      }}
    >
      <form class="form" onSubmit={submit}>
        <Field label="Name" error={param === "name" ? "Check the name." : null}>
          {({ id }) => <input id={id} required value={name} onInput={(event) => setName(event.currentTarget.value)} />}
        </Field>
        <Field
          label="Slug (optional)"
          hint="Lower-case letters, digits and '-'."
          error={param === "slug" ? "Check the slug." : null}
        >
          {({ id, describedBy }) => (
            <input
              id={id}
              value={slug}
              aria-describedby={describedBy}
              onInput={(event) => setSlug(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Description (optional)">
          {({ id }) => (
            <input id={id} value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
          )}
        </Field>
        <Problem error={action.error} />
        <div class="form-actions">
          <Button variant="primary" type="submit" busy={action.busy}>
            Create workspace
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function WorkspaceMembers({ id }: { id: string }) {
  const path = `/v1/admin/workspaces/${encodeURIComponent(id)}`;
  const workspace = useAsync(() => api<Workspace>(path), [path]);
  const members = useList<Member>(`${path}/users`);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<"member" | "manager">("member");
  const [removing, setRemoving] = useState<Member | null>(null);
  const [deleting, setDeleting] = useState(false);
  const add = useAction();
  const change = useAction();

  const columns: Column<Member>[] = [
    { header: "Email", cell: (member) => member.email ?? member.user_id },
    { header: "Name", cell: (member) => member.name ?? "", wide: true },
    {
      header: "Role",
      cell: (member) => (
        <select
          aria-label={`Role of ${member.email ?? member.user_id}`}
          value={member.role}
          disabled={change.busy}
          onChange={async (event) => {
            const next = event.currentTarget.value;
            await change.run(() =>
              api(`${path}/users/${encodeURIComponent(member.user_id)}`, { method: "PUT", body: { role: next } }),
            );
            members.reload();
          }}
        >
          <option value="member">member</option>
          <option value="manager">manager</option>
        </select>
      ),
    },
    { header: "Organisation role", cell: (member) => member.organisation_role ?? "", wide: true },
    {
      header: "Actions",
      cell: (member) => (
        <Button
          variant="danger"
          onClick={() => setRemoving(member)}
          aria-label={`Remove ${member.email ?? member.user_id}`}
        >
          Remove
        </Button>
      ),
    },
  ];

  return (
    <section class="manage-page" aria-labelledby="workspace-title">
      <p>
        <a href={href("/workspaces")}>← Workspaces</a>
      </p>
      <header class="page-header">
        <h1 id="workspace-title">{workspace.data?.name ?? id}</h1>
        <Button variant="danger" onClick={() => setDeleting(true)}>
          Delete workspace
        </Button>
      </header>
      <Problem error={workspace.error} />
      {workspace.data?.description && <p>{workspace.data.description}</p>}
      <h2>Members</h2>
      <form
        class="toolbar"
        onSubmit={async (event) => {
          event.preventDefault();
          if (await add.run(() => api(`${path}/users`, { method: "POST", body: { email, role } }))) {
            setEmail("");
            members.reload();
          }
        }}
      >
        <Field label="Email of a user">
          {({ id: fieldId }) => (
            <input
              id={fieldId}
              type="email"
              required
              value={email}
              onInput={(event) => setEmail(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Workspace role">
          {({ id: fieldId }) => (
            <select
              id={fieldId}
              value={role}
              onChange={(event) => setRole(event.currentTarget.value as "member" | "manager")}
            >
              <option value="member">member</option>
              <option value="manager">manager</option>
            </select>
          )}
        </Field>
        <Button variant="primary" type="submit" busy={add.busy}>
          Add member
        </Button>
      </form>
      <Problem error={add.error ?? change.error ?? members.error} />
      <Table
        caption={`Members of ${workspace.data?.name ?? id}`}
        columns={columns}
        rows={members.items}
        rowKey={(member) => member.user_id}
        empty={members.loading ? "Loading…" : "No members."}
      />
      {members.hasMore && <Button onClick={members.loadMore}>Load more</Button>}
      <ConfirmDialog
        title="Remove member"
        open={removing !== null}
        danger
        confirmLabel="Remove"
        onClose={() => setRemoving(null)}
        onConfirm={async () => {
          await api(`${path}/users/${encodeURIComponent(removing!.user_id)}`, { method: "DELETE" });
          members.reload();
        }}
      >
        <p>Remove {removing?.email ?? removing?.user_id} from this workspace?</p>
      </ConfirmDialog>
      <ConfirmDialog
        title="Delete workspace"
        open={deleting}
        danger
        confirmLabel="Delete"
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          await api(path, { method: "DELETE" });
          navigate("/workspaces");
        }}
      >
        <p>Delete the workspace {workspace.data?.name ?? id}? The gateway refuses while it still holds resources.</p>
      </ConfirmDialog>
    </section>
  );
}
