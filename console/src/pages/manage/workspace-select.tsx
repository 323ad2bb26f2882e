import { useEffect } from "preact/hooks";
import { useSession } from "../../session.ts";
import { Field } from "../../ui/index.ts";

interface WorkspaceSelectProps {
  label?: string;
  value: string;
  onChange: (id: string) => void;
  /** The text of the empty choice (e.g. "Organisation-wide"); without it a workspace must be chosen. */
  emptyLabel?: string;
  error?: string | null;
}

/**
 * Picks a workspace among those the signed-in principal can list; a principal that cannot list them (a
 * workspace key) types the id, or leaves it empty for its own workspace.
 */
export function WorkspaceSelect({ label = "Workspace", value, onChange, emptyLabel, error }: WorkspaceSelectProps) {
  const session = useSession();
  const workspaces = session.workspaces;
  // Without an empty choice the select shows its first workspace: hold that as the value too (the list may
  // arrive after the form opened), so what is sent is what is seen.
  const first = workspaces[0]?.id;
  useEffect(() => {
    if (emptyLabel === undefined && first && !workspaces.some((workspace) => workspace.id === value)) onChange(first);
  }, [emptyLabel, first, value, workspaces, onChange]);
  return (
    <Field
      label={label}
      error={error}
      hint={workspaces.length === 0 ? "Workspace id or slug; empty: your own." : undefined}
    >
      {({ id, describedBy, invalid }) =>
        workspaces.length > 0 ? (
          <select
            id={id}
            value={value}
            aria-describedby={describedBy}
            aria-invalid={invalid ? "true" : undefined}
            onChange={(event) => onChange(event.currentTarget.value)}
          >
            {emptyLabel !== undefined && <option value="">{emptyLabel}</option>}
            {workspaces.map((workspace) => (
              <option key={workspace.id} value={workspace.id}>
                {workspace.name ?? workspace.slug ?? workspace.id}
              </option>
            ))}
          </select>
        ) : (
          <input
            id={id}
            value={value}
            aria-describedby={describedBy}
            aria-invalid={invalid ? "true" : undefined}
            onInput={(event) => onChange(event.currentTarget.value)}
          />
        )
      }
    </Field>
  );
}
