import { useEffect, useState } from "preact/hooks";
import { api } from "../../api.ts";
import type { PageProps } from "../../pages.ts";
import { href, navigate } from "../../router.ts";
import { useSession } from "../../session.ts";
import { Button, type Column, Dialog, Field, useAsync } from "../../ui/index.ts";
import { ConfirmDialog } from "./confirm-dialog.tsx";
import { when } from "./format.ts";
import { Problem, errorParam } from "./problem.tsx";
import { PromptPlayground } from "./prompt-playground.tsx";
import { useAction } from "./use-action.ts";
import { useList } from "./use-list.ts";
import { WorkspaceSelect } from "./workspace-select.tsx";
import { ListTable } from "./list-table.tsx";

/** A prompt as `/v1/prompts` lists it (core/control/prompts/service.ts presentPrompt). */
interface Prompt {
  id: string;
  slug: string | null;
  name: string;
  workspace_id: string | null;
  latest_version: number;
  default_version: number;
  last_updated_at: string | null;
}

/** One version's content (`GET /v1/prompts/:id` answers the published one's; versions list them all). */
interface PromptContent {
  string: string;
  model?: string | null;
  virtual_key?: string | null;
  parameters?: Record<string, unknown> | null;
}

interface PromptVersion extends PromptContent {
  prompt_version: number;
  is_default: boolean;
  version_description?: string | null;
  created_at: string | null;
}

const STARTER =
  '[{"role": "system", "content": "You are a {{tone}} assistant."}, {"role": "user", "content": "{{question}}"}]';

/** `#/prompts`: the saved prompts; `#/prompts/<id>`: one prompt, its versions and the playground. */
export default function PromptsPage({ subpath }: PageProps) {
  return subpath ? <PromptDetail id={decodeURIComponent(subpath)} /> : <PromptList />;
}

function PromptList() {
  const session = useSession();
  const list = useList<Prompt>("/v1/prompts", { workspace_id: session.workspaceId ?? undefined });
  const [creating, setCreating] = useState(false);
  const columns: Column<Prompt>[] = [
    { header: "Name", cell: (prompt) => <a href={href(`/prompts/${encodeURIComponent(prompt.id)}`)}>{prompt.name}</a> },
    { header: "Slug", cell: (prompt) => <code>{prompt.slug ?? prompt.id}</code>, wide: true },
    { header: "Published", cell: (prompt) => `v${prompt.default_version}`, numeric: true },
    { header: "Latest", cell: (prompt) => `v${prompt.latest_version}`, numeric: true, wide: true },
    { header: "Updated", cell: (prompt) => when(prompt.last_updated_at), wide: true },
  ];
  return (
    <section class="manage-page" aria-labelledby="prompts-title">
      <header class="page-header">
        <h1 id="prompts-title">Prompts</h1>
        <Button variant="primary" onClick={() => setCreating(true)}>
          New prompt
        </Button>
      </header>
      <ListTable
        list={list}
        rows={list.items}
        caption="Prompts"
        columns={columns}
        rowKey={(prompt) => prompt.id}
        empty="No prompts yet."
      />
      <Dialog title="New prompt" open={creating} onClose={() => setCreating(false)}>
        {creating && <PromptForm onSaved={(id) => navigate(`/prompts/${encodeURIComponent(id)}`)} />}
      </Dialog>
    </section>
  );
}

/** Creates a prompt, or (with `promptId`) saves new content as its next version. */
function PromptForm({
  promptId,
  current,
  onSaved,
}: {
  promptId?: string;
  current?: PromptContent & { name?: string };
  onSaved: (id: string) => void;
}) {
  const session = useSession();
  const [name, setName] = useState(current?.name ?? "");
  const [workspace, setWorkspace] = useState(session.workspaceId ?? session.workspaces[0]?.id ?? "");
  const [template, setTemplate] = useState(current?.string ?? STARTER);
  const [model, setModel] = useState(current?.model ?? "");
  const [provider, setProvider] = useState(current?.virtual_key ?? "");
  const [description, setDescription] = useState("");
  const action = useAction();
  const param = errorParam(action.error);
  const submit = async (event: Event) => {
    event.preventDefault();
    const content = {
      string: template,
      ...(model ? { model } : {}),
      ...(provider ? { virtual_key: provider } : {}),
      ...(description ? { version_description: description } : {}),
    };
    let saved: { id: string } | undefined;
    const ok = await action.run(async () => {
      saved = promptId
        ? await api<{ id: string }>(`/v1/prompts/${encodeURIComponent(promptId)}`, { method: "PUT", body: content })
        : await api<{ id: string }>("/v1/prompts", {
            method: "POST",
            body: { name, ...content, ...(workspace ? { workspace_id: workspace } : {}) },
          });
    });
    if (ok) onSaved(saved?.id ?? promptId!);
  };
  return (
    <form class="form" onSubmit={submit}>
      {!promptId && (
        <>
          <Field label="Name" error={param === "name" ? "Check the name." : null}>
            {({ id }) => (
              <input id={id} required value={name} onInput={(event) => setName(event.currentTarget.value)} />
            )}
          </Field>
          <WorkspaceSelect value={workspace} onChange={setWorkspace} error={param === "workspace_id" ? param : null} />
        </>
      )}
      <Field
        label="Template"
        hint="Mustache: {{variable}}. A JSON array of {role, content} messages is a chat template; anything else a text prompt."
        error={param === "string" ? (action.error as Error).message : null}
      >
        {({ id, describedBy }) => (
          <textarea
            id={id}
            rows={8}
            required
            value={template}
            aria-describedby={describedBy}
            onInput={(event) => setTemplate(event.currentTarget.value)}
          />
        )}
      </Field>
      <div class="form-row">
        <Field label="Model (optional)">
          {({ id }) => <input id={id} value={model} onInput={(event) => setModel(event.currentTarget.value)} />}
        </Field>
        <Field label="Saved provider (optional)" hint="An integration or virtual key slug.">
          {({ id, describedBy }) => (
            <input
              id={id}
              value={provider}
              aria-describedby={describedBy}
              onInput={(event) => setProvider(event.currentTarget.value)}
            />
          )}
        </Field>
      </div>
      {promptId && (
        <Field label="Version description (optional)">
          {({ id }) => (
            <input id={id} value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
          )}
        </Field>
      )}
      <Problem error={action.error} />
      <div class="form-actions">
        <Button variant="primary" type="submit" busy={action.busy}>
          {promptId ? "Save as a new version" : "Create prompt"}
        </Button>
      </div>
    </form>
  );
}

function PromptDetail({ id }: { id: string }) {
  const path = `/v1/prompts/${encodeURIComponent(id)}`;
  const [tick, setTick] = useState(0);
  const prompt = useAsync(() => api<Prompt & PromptContent>(path), [path, tick]);
  const versions = useList<PromptVersion>(`${path}/versions`);
  const publish = useAction();
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  useEffect(() => setEditing(false), [tick]);
  const refresh = () => {
    setTick((value) => value + 1);
    versions.reload();
  };

  const choices = [
    { value: "", label: `Published (v${prompt.data?.default_version ?? "?"})`, template: prompt.data?.string ?? "" },
    ...versions.items.map((version) => ({
      value: String(version.prompt_version),
      label: `Version ${version.prompt_version}${version.is_default ? " (published)" : ""}`,
      template: version.string,
    })),
  ];
  return (
    <section class="manage-page" aria-labelledby="prompt-title">
      <p>
        <a href={href("/prompts")}>← Prompts</a>
      </p>
      <header class="page-header">
        <h1 id="prompt-title">{prompt.data?.name ?? id}</h1>
        <span class="row-actions">
          <Button onClick={() => setEditing(true)}>New version</Button>
          <Button variant="danger" onClick={() => setDeleting(true)}>
            Delete
          </Button>
        </span>
      </header>
      <Problem error={prompt.error} />
      <div class="split">
        <div>
          <h2>Published template</h2>
          <pre>{prompt.data?.string ?? ""}</pre>
          <p class="muted">
            Model: {prompt.data?.model ?? "—"} · Saved provider: {prompt.data?.virtual_key ?? "—"}
          </p>
          <h2>Versions</h2>
          <Problem error={publish.error ?? versions.error} />
          <ul class="version-list">
            {versions.items.map((version) => (
              <li key={version.prompt_version}>
                Version {version.prompt_version} <span class="muted">{when(version.created_at)}</span>
                {version.version_description ? ` — ${version.version_description}` : ""}{" "}
                {version.is_default ? (
                  <strong>published</strong>
                ) : (
                  <Button
                    busy={publish.busy}
                    aria-label={`Publish version ${version.prompt_version}`}
                    onClick={async () => {
                      const body = { version: version.prompt_version };
                      if (await publish.run(() => api(`${path}/makeDefault`, { method: "PUT", body }))) refresh();
                    }}
                  >
                    Publish
                  </Button>
                )}
              </li>
            ))}
          </ul>
          {versions.hasMore && <Button onClick={versions.loadMore}>More versions</Button>}
        </div>
        {prompt.data && <PromptPlayground promptId={prompt.data.id} versions={choices} />}
      </div>
      <Dialog title="New version" open={editing} onClose={() => setEditing(false)}>
        {editing && prompt.data && <PromptForm promptId={prompt.data.id} current={prompt.data} onSaved={refresh} />}
      </Dialog>
      <ConfirmDialog
        title="Delete prompt"
        open={deleting}
        danger
        confirmLabel="Delete"
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          await api(path, { method: "DELETE" });
          navigate("/prompts");
        }}
      >
        <p>Delete this prompt and every version? Requests naming it will fail.</p>
      </ConfirmDialog>
    </section>
  );
}
