import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import type { PageProps } from "../../pages.ts";
import { useSession } from "../../session.ts";
import { Button, type Column, Dialog, Field, Table } from "../../ui/index.ts";
import { ConfirmDialog } from "./confirm-dialog.tsx";
import { when } from "./format.ts";
import { Problem, errorParam } from "./problem.tsx";
import { SecretOnce } from "./secret-once.tsx";
import { useAction } from "./use-action.ts";
import { useList } from "./use-list.ts";

/** A user as `/v1/admin/users` answers it (core/control/users/store.ts presentUser). */
interface User {
  id: string;
  email: string;
  name: string | null;
  role: "owner" | "admin" | "member";
  created_at: string | null;
}

/** An invite (presentInvite); the token is answered only by create and resend. */
interface Invite {
  id: string;
  email: string;
  role: string;
  workspaces: Array<{ id: string; role: string }>;
  status: string;
  expires_at: string | null;
  created_at: string | null;
  accept_url?: string;
}

const ORG_ROLES = ["member", "admin", "owner"] as const;

/** `#/users`: the organisation's users (role, removal) and its invites (create, resend, revoke). */
export default function UsersPage(_props: PageProps) {
  const users = useList<User>("/v1/admin/users");
  const invites = useList<Invite>("/v1/admin/users/invites");
  const change = useAction();
  const [removing, setRemoving] = useState<User | null>(null);
  const [revoking, setRevoking] = useState<Invite | null>(null);
  const [inviting, setInviting] = useState(false);
  const [link, setLink] = useState<string | null>(null);
  const resend = useAction();

  const userColumns: Column<User>[] = [
    { header: "Email", cell: (user) => user.email },
    { header: "Name", cell: (user) => user.name ?? "", wide: true },
    {
      header: "Role",
      cell: (user) => (
        <select
          aria-label={`Organisation role of ${user.email}`}
          value={user.role}
          disabled={change.busy}
          onChange={async (event) => {
            const role = event.currentTarget.value;
            await change.run(() =>
              api(`/v1/admin/users/${encodeURIComponent(user.id)}`, { method: "PUT", body: { role } }),
            );
            users.reload();
          }}
        >
          {ORG_ROLES.map((role) => (
            <option key={role} value={role}>
              {role}
            </option>
          ))}
        </select>
      ),
    },
    { header: "Joined", cell: (user) => when(user.created_at), wide: true },
    {
      header: "Actions",
      cell: (user) => (
        <Button variant="danger" onClick={() => setRemoving(user)} aria-label={`Remove user ${user.email}`}>
          Remove
        </Button>
      ),
    },
  ];

  const inviteColumns: Column<Invite>[] = [
    { header: "Email", cell: (invite) => invite.email },
    { header: "Role", cell: (invite) => invite.role },
    {
      header: "Workspaces",
      cell: (invite) => invite.workspaces.map((entry) => `${entry.id} (${entry.role})`).join(", ") || "—",
      wide: true,
    },
    { header: "Status", cell: (invite) => invite.status },
    { header: "Expires", cell: (invite) => when(invite.expires_at), wide: true },
    {
      header: "Actions",
      cell: (invite) =>
        invite.status === "pending" ? (
          <span class="row-actions">
            <Button
              busy={resend.busy}
              aria-label={`Resend the invite to ${invite.email}`}
              onClick={async () => {
                let answer: Invite | undefined;
                const ok = await resend.run(async () => {
                  answer = await api<Invite>(`/v1/admin/users/invites/${encodeURIComponent(invite.id)}/resend`, {
                    method: "POST",
                  });
                });
                if (ok && answer?.accept_url) setLink(answer.accept_url);
                invites.reload();
              }}
            >
              Resend
            </Button>
            <Button
              variant="danger"
              onClick={() => setRevoking(invite)}
              aria-label={`Revoke the invite to ${invite.email}`}
            >
              Revoke
            </Button>
          </span>
        ) : null,
    },
  ];

  return (
    <section class="manage-page" aria-labelledby="users-title">
      <header class="page-header">
        <h1 id="users-title">Users</h1>
        <Button variant="primary" onClick={() => setInviting(true)}>
          Invite user
        </Button>
      </header>
      <Problem error={change.error ?? users.error} />
      <Table
        caption="Users"
        columns={userColumns}
        rows={users.items}
        rowKey={(user) => user.id}
        empty={users.loading ? "Loading…" : "No users."}
      />
      {users.hasMore && <Button onClick={users.loadMore}>More users</Button>}

      <h2>Invites</h2>
      <Problem error={resend.error ?? invites.error} />
      <Table
        caption="Invites"
        columns={inviteColumns}
        rows={invites.items}
        rowKey={(invite) => invite.id}
        empty={invites.loading ? "Loading…" : "No invites."}
      />
      {invites.hasMore && <Button onClick={invites.loadMore}>More invites</Button>}

      <InviteDialog
        open={inviting}
        onClose={() => setInviting(false)}
        onInvited={(invite) => {
          setInviting(false);
          if (invite.accept_url) setLink(invite.accept_url);
          invites.reload();
        }}
      />
      <SecretOnce
        title="Invite link"
        label="Accept link"
        secret={link}
        note="Send it to the invited person; anyone with the link can accept the invite."
        onClose={() => setLink(null)}
      />
      <ConfirmDialog
        title="Remove user"
        open={removing !== null}
        danger
        confirmLabel="Remove"
        onClose={() => setRemoving(null)}
        onConfirm={async () => {
          await api(`/v1/admin/users/${encodeURIComponent(removing!.id)}`, { method: "DELETE" });
          users.reload();
        }}
      >
        <p>Remove {removing?.email} from the organisation? Their API keys are revoked.</p>
      </ConfirmDialog>
      <ConfirmDialog
        title="Revoke invite"
        open={revoking !== null}
        danger
        confirmLabel="Revoke"
        onClose={() => setRevoking(null)}
        onConfirm={async () => {
          await api(`/v1/admin/users/invites/${encodeURIComponent(revoking!.id)}`, { method: "DELETE" });
          invites.reload();
        }}
      >
        <p>Revoke the invite to {revoking?.email}? Its link stops working.</p>
      </ConfirmDialog>
    </section>
  );
}

function InviteDialog(props: { open: boolean; onClose: () => void; onInvited: (invite: Invite) => void }) {
  const session = useSession();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState("member");
  const [workspaces, setWorkspaces] = useState<Record<string, "" | "member" | "manager">>({});
  const action = useAction();
  const param = errorParam(action.error);
  const submit = async (event: Event) => {
    event.preventDefault();
    const chosen = Object.entries(workspaces)
      .filter(([, value]) => value)
      .map(([id, value]) => ({ id, role: value }));
    let invite: Invite | undefined;
    const ok = await action.run(async () => {
      invite = await api<Invite>("/v1/admin/users/invites", {
        method: "POST",
        body: { email, role, workspaces: chosen },
      });
    });
    if (ok && invite) {
      setEmail("");
      setWorkspaces({});
      props.onInvited(invite);
    }
  };
  return (
    <Dialog
      title="Invite user"
      open={props.open}
      onClose={() => {
        action.clear();
        props.onClose();
      }}
    >
      <form class="form" onSubmit={submit}>
        <Field label="Email" error={param === "email" ? "Check the email." : null}>
          {({ id }) => (
            <input
              id={id}
              type="email"
              required
              value={email}
              onInput={(event) => setEmail(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Organisation role">
          {({ id }) => (
            <select id={id} value={role} onChange={(event) => setRole(event.currentTarget.value)}>
              {ORG_ROLES.map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          )}
        </Field>
        {session.workspaces.length > 0 && (
          <fieldset class="scope-picker">
            <legend>Workspaces</legend>
            {session.workspaces.map((workspace) => (
              <Field key={workspace.id} label={workspace.name ?? workspace.slug ?? workspace.id}>
                {({ id }) => (
                  <select
                    id={id}
                    value={workspaces[workspace.id] ?? ""}
                    onChange={(event) =>
                      setWorkspaces({
                        ...workspaces,
                        [workspace.id]: event.currentTarget.value as "member" | "manager",
                      })
                    }
                  >
                    <option value="">not a member</option>
                    <option value="member">member</option>
                    <option value="manager">manager</option>
                  </select>
                )}
              </Field>
            ))}
          </fieldset>
        )}
        <Problem error={action.error} />
        <div class="form-actions">
          <Button variant="primary" type="submit" busy={action.busy}>
            Send invite
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
