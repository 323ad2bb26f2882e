import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import type { PageProps } from "../../pages.ts";
import { useSession } from "../../session.ts";
import { Button, type Column, Dialog, Field } from "../../ui/index.ts";
import { ConfirmDialog } from "./confirm-dialog.tsx";
import { isoFromLocal, when } from "./format.ts";
import { Problem, errorParam } from "./problem.tsx";
import { ScopePicker } from "./scope-picker.tsx";
import { SecretOnce } from "./secret-once.tsx";
import { useList } from "./use-list.ts";
import { WorkspaceSelect } from "./workspace-select.tsx";
import { ListTable } from "./list-table.tsx";

/** An API key as `GET /v1/api-keys` answers it (core/control/api-keys/rules.ts presentKey): never the secret. */
interface ApiKey {
  id: string;
  name: string;
  description: string | null;
  type: string;
  key_type: "organisation" | "workspace";
  sub_type: "service" | "user";
  key: string;
  workspace_id: string | null;
  user_id: string | null;
  status: string;
  scopes: string[];
  expires_at: string | null;
  created_at: string | null;
  last_rotated_at: string | null;
}

interface WithSecret extends ApiKey {
  /** The new secret: answered once, by create and rotate. */
  key: string;
  previous_key_expires_at?: string;
}

const KINDS = [
  { value: "workspace/service", label: "Workspace service key" },
  { value: "workspace/user", label: "Workspace user key (acts for one member)" },
  { value: "organisation/service", label: "Organisation service key (every workspace)" },
];

export default function KeysPage(_props: PageProps) {
  const session = useSession();
  const [showRevoked, setShowRevoked] = useState(false);
  const list = useList<ApiKey>("/v1/api-keys", { workspace_id: session.workspaceId ?? undefined });
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ title: string; value: string; note?: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [rotating, setRotating] = useState<ApiKey | null>(null);

  const rows = list.items.filter((key) => showRevoked || key.status !== "revoked");
  const columns: Column<ApiKey>[] = [
    { header: "Name", cell: (key) => <strong>{key.name}</strong> },
    { header: "Type", cell: (key) => key.type },
    { header: "Key", cell: (key) => <code>{key.key}</code>, wide: true },
    { header: "Workspace", cell: (key) => key.workspace_id ?? "all", wide: true },
    {
      header: "Scopes",
      cell: (key) => (
        <span title={key.scopes.join(", ")}>
          {key.scopes.includes("*") ? "all (*)" : `${key.scopes.length} scope${key.scopes.length === 1 ? "" : "s"}`}
        </span>
      ),
    },
    { header: "Status", cell: (key) => <span class={`status status-${key.status}`}>{key.status}</span> },
    { header: "Created", cell: (key) => when(key.created_at), wide: true },
    {
      header: "Actions",
      cell: (key) =>
        key.status === "active" ? (
          <span class="row-actions">
            <Button onClick={() => setRotating(key)} aria-label={`Rotate key ${key.name}`}>
              Rotate
            </Button>
            <Button variant="danger" onClick={() => setRevoking(key)} aria-label={`Revoke key ${key.name}`}>
              Revoke
            </Button>
          </span>
        ) : null,
    },
  ];

  return (
    <section class="manage-page" aria-labelledby="keys-title">
      <header class="page-header">
        <h1 id="keys-title">API keys</h1>
        <Button variant="primary" onClick={() => setCreating(true)}>
          Create key
        </Button>
      </header>
      <label class="check">
        <input
          type="checkbox"
          checked={showRevoked}
          onChange={(event) => setShowRevoked(event.currentTarget.checked)}
        />
        Show revoked keys
      </label>
      <ListTable
        list={list}
        caption="API keys"
        columns={columns}
        rows={rows}
        rowKey={(key) => key.id}
        empty="No keys."
      />

      <CreateKeyDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(created) => {
          setCreating(false);
          setSecret({ title: `Key "${created.name}" created`, value: created.key });
          list.reload();
        }}
      />
      <ConfirmDialog
        title="Revoke key"
        open={revoking !== null}
        confirmLabel="Revoke"
        danger
        onClose={() => setRevoking(null)}
        onConfirm={async () => {
          await api(`/v1/api-keys/${encodeURIComponent(revoking!.id)}`, { method: "DELETE" });
          list.reload();
        }}
      >
        <p>
          Revoke <strong>{revoking?.name}</strong>? Every request with it fails from now on. This cannot be undone.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        title="Rotate key"
        open={rotating !== null}
        confirmLabel="Rotate"
        onClose={() => setRotating(null)}
        onConfirm={async () => {
          const rotated = await api<WithSecret>(`/v1/api-keys/${encodeURIComponent(rotating!.id)}/rotate`, {
            method: "POST",
          });
          setSecret({
            title: `Key "${rotated.name}" rotated`,
            value: rotated.key,
            note: rotated.previous_key_expires_at
              ? `The previous secret keeps working until ${when(rotated.previous_key_expires_at)}.`
              : undefined,
          });
          list.reload();
        }}
      >
        <p>
          Rotate <strong>{rotating?.name}</strong>? A new secret is made; the old one keeps working for a short overlap
          so clients can switch.
        </p>
      </ConfirmDialog>
      <SecretOnce
        title={secret?.title ?? ""}
        label="API key"
        secret={secret?.value ?? null}
        note={secret?.note}
        onClose={() => setSecret(null)}
      />
    </section>
  );
}

function CreateKeyDialog(props: { open: boolean; onClose: () => void; onCreated: (key: WithSecret) => void }) {
  const session = useSession();
  const [name, setName] = useState("");
  const [kind, setKind] = useState(KINDS[0].value);
  const [workspace, setWorkspace] = useState(session.workspaceId ?? session.workspaces[0]?.id ?? "");
  const [userId, setUserId] = useState("");
  const [description, setDescription] = useState("");
  const [expires, setExpires] = useState("");
  const [scopes, setScopes] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [type, subType] = kind.split("/");
  const param = errorParam(error);
  const paramError = (name: string) => (param === name || param?.startsWith(`${name}[`) ? param : null);

  const close = () => {
    setError(undefined);
    props.onClose();
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api<WithSecret>(`/v1/api-keys/${type}/${subType}`, {
        method: "POST",
        body: {
          name,
          scopes,
          ...(description ? { description } : {}),
          ...(type === "workspace" && workspace ? { workspace_id: workspace } : {}),
          ...(subType === "user" ? { user_id: userId } : {}),
          ...(expires ? { expires_at: isoFromLocal(expires) } : {}),
        },
      });
      setName("");
      setDescription("");
      setScopes([]);
      setExpires("");
      props.onCreated(created);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title="Create API key" open={props.open} onClose={close}>
      <form id="create-key-form" class="form" onSubmit={submit}>
        <Field label="Name" error={paramError("name") && "Check the name."}>
          {({ id, describedBy }) => (
            <input
              id={id}
              required
              maxLength={200}
              value={name}
              aria-describedby={describedBy}
              onInput={(event) => setName(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Type">
          {({ id }) => (
            <select id={id} value={kind} onChange={(event) => setKind(event.currentTarget.value)}>
              {KINDS.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        {type === "workspace" && (
          <WorkspaceSelect value={workspace} onChange={setWorkspace} error={paramError("workspace_id")} />
        )}
        {subType === "user" && (
          <Field label="User id" hint="The member the key acts for." error={paramError("user_id")}>
            {({ id, describedBy }) => (
              <input
                id={id}
                required
                value={userId}
                aria-describedby={describedBy}
                onInput={(event) => setUserId(event.currentTarget.value)}
              />
            )}
          </Field>
        )}
        <Field label="Description (optional)">
          {({ id }) => (
            <input id={id} value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
          )}
        </Field>
        <Field label="Expires (optional)" error={paramError("expires_at")}>
          {({ id }) => (
            <input
              id={id}
              type="datetime-local"
              value={expires}
              onInput={(event) => setExpires(event.currentTarget.value)}
            />
          )}
        </Field>
        <ScopePicker value={scopes} onChange={setScopes} error={paramError("scopes")} />
        <Problem error={error} />
        <div class="form-actions">
          <Button variant="primary" type="submit" busy={busy}>
            Create key
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
