import { useMemo, useState } from "preact/hooks";
import { api } from "../../api.ts";
import { Button, Field } from "../../ui/index.ts";
import { pretty } from "./json-editor.tsx";
import { Problem } from "./problem.tsx";
import { useAction } from "./use-action.ts";

/** Names a mustache template prints (`{{name}}`, `{{{name}}}`, `{{& name}}`), not sections, partials or comments. */
export function templateVariables(template: string): string[] {
  const names = new Set<string>();
  for (const match of template.matchAll(/\{\{(\{?)\s*(&?)\s*([^{}#^/>!=\s][^{}\s]*)\s*\}?\}\}/g)) names.add(match[3]);
  return [...names];
}

/** A chat completion's or text completion's text, as far as the answer has one. */
function answerText(answer: unknown): string | undefined {
  const choice = (answer as { choices?: Array<{ message?: { content?: unknown }; text?: unknown }> })?.choices?.[0];
  const content = choice?.message?.content ?? choice?.text;
  return typeof content === "string" ? content : undefined;
}

interface PlaygroundProps {
  promptId: string;
  /** Version choices: `""` (published), `latest`, or a number, with the template each holds. */
  versions: Array<{ value: string; label: string; template: string }>;
}

/**
 * Renders a version (`POST /v1/prompts/{id}@{version}/render`) and runs it (`.../completions`) with the variables
 * its template prints; what the gateway answers (or refuses, naming the variable) is shown as is.
 */
export function PromptPlayground({ promptId, versions }: PlaygroundProps) {
  const [version, setVersion] = useState("");
  const [values, setValues] = useState<Record<string, string>>({});
  const [output, setOutput] = useState<{ kind: "render" | "run"; body: unknown } | null>(null);
  const action = useAction();
  const chosen = versions.find((entry) => entry.value === version) ?? versions[0];
  const names = useMemo(() => templateVariables(chosen?.template ?? ""), [chosen?.template]);
  const target = `/v1/prompts/${encodeURIComponent(promptId)}${version ? `@${encodeURIComponent(version)}` : ""}`;
  // An empty field is left out, so the gateway names the variable still missing rather than printing "".
  const variables = Object.fromEntries(names.filter((name) => values[name]).map((name) => [name, values[name]]));

  const call = (kind: "render" | "run") =>
    action.run(async () => {
      setOutput(null);
      const body =
        kind === "render"
          ? await api(`${target}/render`, { method: "POST", body: { variables } })
          : await api(`${target}/completions`, { method: "POST", body: { variables, stream: false } });
      setOutput({ kind, body });
    });

  const text = output?.kind === "run" ? answerText(output.body) : undefined;
  return (
    <section class="card playground" aria-labelledby="playground-title">
      <h2 id="playground-title">Playground</h2>
      <Field label="Version">
        {({ id }) => (
          <select id={id} value={version} onChange={(event) => setVersion(event.currentTarget.value)}>
            {versions.map((entry) => (
              <option key={entry.value} value={entry.value}>
                {entry.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <p class="muted">
        {names.length === 0 ? "This version prints no variables." : "Empty variables are left out of the request."}
      </p>
      {names.map((name) => (
        <Field key={name} label={`Variable ${name}`}>
          {({ id }) => (
            <textarea
              id={id}
              rows={2}
              value={values[name] ?? ""}
              onInput={(event) => setValues({ ...values, [name]: event.currentTarget.value })}
            />
          )}
        </Field>
      ))}
      <div class="form-actions">
        <Button onClick={() => call("render")} busy={action.busy}>
          Render
        </Button>
        <Button variant="primary" onClick={() => call("run")} busy={action.busy}>
          Run
        </Button>
      </div>
      <Problem error={action.error} />
      <div aria-live="polite">
        {output && (
          <>
            <h3>{output.kind === "render" ? "Rendered request" : "Answer"}</h3>
            {text !== undefined && <p class="answer-text">{text}</p>}
            <pre data-testid="playground-output">{pretty(output.body)}</pre>
          </>
        )}
      </div>
    </section>
  );
}
