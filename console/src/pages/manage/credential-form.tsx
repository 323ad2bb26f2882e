import { useId, useState } from "preact/hooks";
import { api } from "../../api.ts";
import { Button, Field } from "../../ui/index.ts";
import { Problem, errorParam } from "./problem.tsx";
import { SecretInput } from "./secret-input.tsx";
import { useAction } from "./use-action.ts";
import { WorkspaceSelect } from "./workspace-select.tsx";

/**
 * The form of a saved provider (an integration or a virtual key: the same stored record). Credentials are
 * write-only: each secret field shows the masked hint the API answered and is sent only when a value is typed.
 */

/** Providers offered in the picker (any id the gateway knows may be typed). */
const COMMON_PROVIDERS = [
  "openai",
  "anthropic",
  "azure-openai",
  "azure-ai",
  "bedrock",
  "vertex-ai",
  "google",
  "mistral-ai",
  "groq",
  "cohere",
  "together-ai",
  "fireworks-ai",
  "deepseek",
  "openrouter",
  "ollama",
  "openai-compatible",
];

/** Settings in the clear (shown and sent as they are), per provider family. */
const PLAIN_FIELDS: Record<string, Array<[string, string]>> = {
  "azure-openai": [
    ["resource_name", "Azure resource name"],
    ["deployment_id", "Deployment id"],
    ["api_version", "API version"],
  ],
  "vertex-ai": [
    ["vertex_project_id", "Vertex project id"],
    ["vertex_region", "Vertex region"],
  ],
  bedrock: [["aws_region", "AWS region"]],
};

/** Secret settings (write-only), per provider family; the API key is every provider's. */
const SECRET_FIELDS: Record<string, Array<[string, string]>> = {
  "vertex-ai": [["vertex_service_account_json", "Service account JSON"]],
  bedrock: [
    ["aws_access_key_id", "AWS access key id"],
    ["aws_secret_access_key", "AWS secret access key"],
    ["aws_session_token", "AWS session token"],
  ],
};

/** What the API answers about a saved provider (integration or virtual key), as far as the form needs. */
export interface SavedProvider {
  id: string;
  slug: string;
  name: string;
  provider: string;
  workspace_id: string | null;
  note: string | null;
  masked_api_key: string | null;
  /** Clear settings and masked hints of the secret ones. */
  settings: Record<string, unknown>;
}

interface CredentialFormProps {
  /** `/v1/integrations` or `/v1/virtual-keys`. */
  collection: string;
  /** The body field naming the provider: `ai_provider_id` (integrations) or `provider` (virtual keys). */
  providerField: "ai_provider_id" | "provider";
  /** The body field of the note: `description` (integrations) or `note` (virtual keys). */
  noteField: "description" | "note";
  /** The saved provider being edited (by its id or slug in `editPath`), or undefined to create one. */
  existing?: SavedProvider;
  editPath?: string;
  /** Whether a slug may be typed on creation (required for integrations). */
  slugRequired: boolean;
  onSaved: () => void;
}

export function CredentialForm(props: CredentialFormProps) {
  const { existing } = props;
  const formId = useId();
  const [name, setName] = useState(existing?.name ?? "");
  const [slug, setSlug] = useState(existing?.slug ?? "");
  const [provider, setProvider] = useState(existing?.provider ?? "openai");
  const [workspace, setWorkspace] = useState(existing?.workspace_id ?? "");
  const [note, setNote] = useState(existing?.note ?? "");
  const [key, setKey] = useState("");
  const [customHost, setCustomHost] = useState(String(existing?.settings.custom_host ?? ""));
  const [plain, setPlain] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      (PLAIN_FIELDS[existing?.provider ?? ""] ?? []).map(([field]) => [field, String(existing?.settings[field] ?? "")]),
    ),
  );
  const [secrets, setSecrets] = useState<Record<string, string>>({});
  const action = useAction();
  const param = errorParam(action.error);
  const paramError = (field: string) => (param && (param === field || param.endsWith(`.${field}`)) ? param : null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const configurations: Record<string, unknown> = {};
    if (customHost.trim() && customHost !== String(existing?.settings.custom_host ?? ""))
      configurations.custom_host = customHost.trim();
    for (const [field] of PLAIN_FIELDS[provider] ?? []) {
      const value = plain[field]?.trim();
      if (value && value !== String(existing?.settings[field] ?? "")) configurations[field] = value;
    }
    // Write-only: only typed secrets are sent; an empty field keeps the stored value.
    for (const [field] of SECRET_FIELDS[provider] ?? [])
      if (secrets[field]?.trim()) configurations[field] = secrets[field];
    const body: Record<string, unknown> = {
      name,
      ...(note !== (existing?.note ?? "") ? { [props.noteField]: note } : {}),
      ...(key.trim() ? { key } : {}),
      ...(Object.keys(configurations).length > 0 ? { configurations } : {}),
    };
    if (!existing) {
      body[props.providerField] = provider;
      if (slug) body.slug = slug;
      if (workspace) body.workspace_id = workspace;
    }
    const ok = await action.run(() =>
      existing ? api(props.editPath!, { method: "PUT", body }) : api(props.collection, { method: "POST", body }),
    );
    if (ok) {
      setKey("");
      setSecrets({});
      props.onSaved();
    }
  };

  return (
    <form class="form" onSubmit={submit} aria-describedby={`${formId}-note`}>
      <p id={`${formId}-note`} class="muted">
        Credentials are write-only: they are stored sealed and never shown again, only a masked hint.
      </p>
      <Field label="Name" error={paramError("name")}>
        {({ id }) => <input id={id} required value={name} onInput={(event) => setName(event.currentTarget.value)} />}
      </Field>
      {!existing && (
        <>
          <Field
            label={props.slugRequired ? "Slug" : "Slug (optional)"}
            hint="Lower-case letters, digits, '-' and '.'; used as @slug in requests."
            error={paramError("slug")}
          >
            {({ id, describedBy }) => (
              <input
                id={id}
                required={props.slugRequired}
                value={slug}
                aria-describedby={describedBy}
                onInput={(event) => setSlug(event.currentTarget.value)}
              />
            )}
          </Field>
          <Field label="Provider" error={paramError(props.providerField)}>
            {({ id }) => (
              <>
                <input
                  id={id}
                  required
                  list={`${formId}-providers`}
                  value={provider}
                  onInput={(event) => setProvider(event.currentTarget.value.trim())}
                />
                <datalist id={`${formId}-providers`}>
                  {COMMON_PROVIDERS.map((option) => (
                    <option key={option} value={option} />
                  ))}
                </datalist>
              </>
            )}
          </Field>
          <WorkspaceSelect
            value={workspace}
            onChange={setWorkspace}
            emptyLabel="Organisation-wide"
            error={paramError("workspace_id")}
          />
        </>
      )}
      <SecretInput
        label="API key"
        hint={existing?.masked_api_key ?? null}
        value={key}
        onInput={setKey}
        error={paramError("key")}
      />
      {(SECRET_FIELDS[provider] ?? []).map(([field, label]) => (
        <SecretInput
          key={field}
          label={label}
          hint={existing ? String(existing.settings[field] ?? "") || null : null}
          value={secrets[field] ?? ""}
          onInput={(value) => setSecrets({ ...secrets, [field]: value })}
          error={paramError(field)}
        />
      ))}
      {(PLAIN_FIELDS[provider] ?? []).map(([field, label]) => (
        <Field key={field} label={label} error={paramError(field)}>
          {({ id }) => (
            <input
              id={id}
              value={plain[field] ?? ""}
              onInput={(event) => setPlain({ ...plain, [field]: event.currentTarget.value })}
            />
          )}
        </Field>
      ))}
      <Field
        label="Custom host (optional)"
        hint="The provider's base URL, if not the default."
        error={paramError("custom_host")}
      >
        {({ id, describedBy }) => (
          <input
            id={id}
            type="url"
            value={customHost}
            aria-describedby={describedBy}
            onInput={(event) => setCustomHost(event.currentTarget.value)}
          />
        )}
      </Field>
      <Field label={props.noteField === "note" ? "Note (optional)" : "Description (optional)"}>
        {({ id }) => <input id={id} value={note} onInput={(event) => setNote(event.currentTarget.value)} />}
      </Field>
      <Problem error={action.error} />
      <div class="form-actions">
        <Button variant="primary" type="submit" busy={action.busy}>
          {existing ? "Save" : "Create"}
        </Button>
      </div>
    </form>
  );
}
