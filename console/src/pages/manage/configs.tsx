import { useEffect, useState } from "preact/hooks";
import { api } from "../../api.ts";
import type { PageProps } from "../../pages.ts";
import { href, navigate } from "../../router.ts";
import { useSession } from "../../session.ts";
import { Button, type Column, Field, useAsync } from "../../ui/index.ts";
import { ConfirmDialog } from "./confirm-dialog.tsx";
import { when } from "./format.ts";
import { JsonEditor, parseJsonObject, pretty } from "./json-editor.tsx";
import { ListTable } from "./list-table.tsx";
import { Problem } from "./problem.tsx";
import { useList } from "./use-list.ts";
import { WorkspaceSelect } from "./workspace-select.tsx";

/** A saved config as `/v1/configs` answers it (core/control/configs/service.ts presentConfig). */
interface Config {
  id: string;
  slug: string | null;
  name: string;
  workspace_id: string | null;
  config: Record<string, unknown>;
  is_default: number;
  status: string;
  version: number;
  created_at: string | null;
  last_updated_at: string | null;
}

interface ConfigVersion {
  version?: number;
  version_id?: string;
  created_at?: string | null;
}

const STARTER = pretty({
  strategy: { mode: "fallback" },
  targets: [{ provider: "openai" }, { provider: "anthropic" }],
});

/** `#/configs`: the list; `#/configs/new`: a new config; `#/configs/<id>`: its editor and versions. */
export default function ConfigsPage({ subpath, query }: PageProps) {
  if (subpath === "new") return <ConfigEditor />;
  if (subpath) return <ConfigEditor id={decodeURIComponent(subpath)} version={query.get("version")} />;
  return <ConfigList />;
}

function ConfigList() {
  const session = useSession();
  const list = useList<Config>("/v1/configs", { workspace_id: session.workspaceId ?? undefined });
  const columns: Column<Config>[] = [
    {
      header: "Name",
      cell: (config) => <a href={href(`/configs/${encodeURIComponent(config.id)}`)}>{config.name}</a>,
    },
    { header: "Slug", cell: (config) => <code>{config.slug ?? config.id}</code> },
    { header: "Workspace", cell: (config) => config.workspace_id ?? "organisation", wide: true },
    { header: "Version", cell: (config) => config.version, numeric: true },
    { header: "Updated", cell: (config) => when(config.last_updated_at), wide: true },
  ];
  return (
    <section class="manage-page" aria-labelledby="configs-title">
      <header class="page-header">
        <h1 id="configs-title">Configs</h1>
        <a class="button button-primary" href={href("/configs/new")}>
          New config
        </a>
      </header>
      <ListTable
        list={list}
        rows={list.items}
        caption="Configs"
        columns={columns}
        rowKey={(config) => config.id}
        empty="No configs yet."
      />
    </section>
  );
}

function ConfigEditor({ id, version }: { id?: string; version?: string | null }) {
  const session = useSession();
  const existing = useAsync(
    () =>
      id
        ? api<Config>(`/v1/configs/${encodeURIComponent(id)}`, { query: { version: version ?? undefined } })
        : Promise.resolve(undefined),
    [id, version],
  );
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [workspace, setWorkspace] = useState(session.workspaceId ?? "");
  const [text, setText] = useState(id ? "" : STARTER);
  const [error, setError] = useState<unknown>(undefined);
  const [saved, setSaved] = useState("");
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [versionsTick, setVersionsTick] = useState(0);

  useEffect(() => {
    const config = existing.data;
    if (!config) return;
    setName(config.name);
    setSlug(config.slug ?? "");
    setText(pretty(config.config));
    setError(undefined);
  }, [existing.data]);

  const save = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setSaved("");
    let config: Record<string, unknown>;
    try {
      config = parseJsonObject(text);
    } catch (failure) {
      setError(failure);
      return;
    }
    setBusy(true);
    try {
      if (id) {
        const updated = await api<Config>(`/v1/configs/${encodeURIComponent(id)}`, {
          method: "PUT",
          body: { name, config, ...(slug && slug !== existing.data?.slug ? { slug } : {}) },
        });
        setSaved(`Saved as version ${updated.version}.`);
        setVersionsTick((value) => value + 1);
        if (version) navigate(`/configs/${encodeURIComponent(id)}`);
      } else {
        const created = await api<Config>("/v1/configs", {
          method: "POST",
          body: { name, config, ...(slug ? { slug } : {}), ...(workspace ? { workspace_id: workspace } : {}) },
        });
        navigate(`/configs/${encodeURIComponent(created.id)}`);
      }
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="manage-page" aria-labelledby="config-title">
      <p>
        <a href={href("/configs")}>← Configs</a>
      </p>
      <h1 id="config-title">{id ? `Config ${existing.data?.name ?? id}` : "New config"}</h1>
      {version && <p class="note">Showing version {version}. Saving it makes it the newest version.</p>}
      <Problem error={existing.error} />
      <form class="form config-form" onSubmit={save}>
        <div class="form-row">
          <Field label="Name">
            {({ id: fieldId }) => (
              <input
                id={fieldId}
                required
                maxLength={255}
                value={name}
                onInput={(event) => setName(event.currentTarget.value)}
              />
            )}
          </Field>
          <Field label="Slug (optional)" hint="Lower-case letters, digits and '-'; usable as x-gateway-config.">
            {({ id: fieldId, describedBy }) => (
              <input
                id={fieldId}
                value={slug}
                aria-describedby={describedBy}
                onInput={(event) => setSlug(event.currentTarget.value)}
              />
            )}
          </Field>
          {!id && <WorkspaceSelect value={workspace} onChange={setWorkspace} emptyLabel="Organisation-wide" />}
        </div>
        <JsonEditor
          label="Config (JSON)"
          value={text}
          onInput={setText}
          error={error}
          hint="Validated by the gateway's own config compiler when saved; an error names its path."
        />
        <div class="form-actions">
          <Button variant="primary" type="submit" busy={busy}>
            {id ? "Save" : "Create config"}
          </Button>
          {id && (
            <Button variant="danger" onClick={() => setDeleting(true)}>
              Delete
            </Button>
          )}
          <span class="saved" role="status">
            {saved}
          </span>
        </div>
      </form>
      {id && <ConfigVersions key={versionsTick} id={id} current={version ?? null} />}
      {id && (
        <ConfirmDialog
          title="Delete config"
          open={deleting}
          danger
          confirmLabel="Delete"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await api(`/v1/configs/${encodeURIComponent(id)}`, { method: "DELETE" });
            navigate("/configs");
          }}
        >
          <p>Delete this config? Requests naming it will fail.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

function ConfigVersions({ id, current }: { id: string; current: string | null }) {
  const versions = useList<ConfigVersion>(`/v1/configs/${encodeURIComponent(id)}/versions`);
  const number = (entry: ConfigVersion) => String(entry.version ?? entry.version_id ?? "");
  return (
    <section aria-labelledby="versions-title" class="versions">
      <h2 id="versions-title">Versions</h2>
      <Problem error={versions.error} />
      <ul class="version-list">
        {versions.items.map((entry) => (
          <li key={number(entry)}>
            <a
              href={href(`/configs/${encodeURIComponent(id)}`, { version: number(entry) })}
              aria-current={current === number(entry) ? "page" : undefined}
            >
              Version {number(entry)}
            </a>{" "}
            <span class="muted">{when(entry.created_at)}</span>
          </li>
        ))}
      </ul>
      {versions.hasMore && <Button onClick={versions.loadMore}>More versions</Button>}
    </section>
  );
}
