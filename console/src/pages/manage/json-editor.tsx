import { useId, useRef } from "preact/hooks";
import { ApiError } from "../../api.ts";

interface JsonEditorProps {
  label: string;
  value: string;
  onInput: (value: string) => void;
  /** The save's failure: an ApiError shows its message and `param` path, anything else its message. */
  error?: unknown;
  hint?: string;
  rows?: number;
  readOnly?: boolean;
}

/**
 * A plain JSON text editor: a textarea with a line-number gutter that scrolls with it (no editor library).
 * The error of the last save is shown beside it with the path inside the document it names.
 */
export function JsonEditor({ label, value, onInput, error, hint, rows = 18, readOnly }: JsonEditorProps) {
  const id = useId();
  const gutter = useRef<HTMLDivElement>(null);
  const lines = value.split("\n").length;
  const errorId = error ? `${id}-error` : undefined;
  const hintId = hint ? `${id}-hint` : undefined;
  const message = error instanceof Error ? error.message : error ? String(error) : "";
  const param = error instanceof ApiError ? error.error.param : null;
  return (
    <div class={`field json-editor${error ? " field-invalid" : ""}`}>
      <label for={id}>{label}</label>
      <div class="json-editor-box">
        <div class="json-editor-gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: lines }, (_, index) => (
            <div key={index}>{index + 1}</div>
          ))}
        </div>
        <textarea
          id={id}
          class="json-editor-text"
          rows={rows}
          value={value}
          readOnly={readOnly}
          spellcheck={false}
          autoCapitalize="off"
          autoComplete="off"
          wrap="off"
          aria-invalid={error ? "true" : undefined}
          aria-describedby={[hintId, errorId].filter(Boolean).join(" ") || undefined}
          onInput={(event) => onInput(event.currentTarget.value)}
          onScroll={(event) => {
            if (gutter.current) gutter.current.scrollTop = event.currentTarget.scrollTop;
          }}
        />
      </div>
      {hint && (
        <small id={hintId} class="field-hint">
          {hint}
        </small>
      )}
      {error ? (
        <div id={errorId} class="json-editor-error" role="alert">
          <strong>{message}</strong>
          {param && (
            <span class="error-param">
              {" "}
              at <code data-testid="error-param">{param}</code>
            </span>
          )}
        </div>
      ) : null}
    </div>
  );
}

/** Parses editor text as a JSON object, or throws an Error saying what is wrong (shown beside the editor). */
export function parseJsonObject(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`Not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    throw new Error("The document must be a JSON object ({ ... }).");
  return parsed as Record<string, unknown>;
}

export const pretty = (value: unknown) => JSON.stringify(value ?? {}, null, 2);
