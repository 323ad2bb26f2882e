import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";

interface FieldProps {
  label: string;
  /** Shown under the control and announced with it (aria-describedby). */
  error?: string | null;
  hint?: string;
  /** Renders the control with the ids it must carry: `<input id={id} aria-describedby={describedBy} />`. */
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ComponentChildren;
}

/** A labelled form control with its hint and error. */
export function Field({ label, error, hint, children }: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(" ") || undefined;
  return (
    <div class={`field${error ? " field-invalid" : ""}`}>
      <label for={id}>{label}</label>
      {children({ id, describedBy, invalid: Boolean(error) })}
      {hint && (
        <small id={hintId} class="field-hint">
          {hint}
        </small>
      )}
      {error && (
        <small id={errorId} class="field-error" role="alert">
          {error}
        </small>
      )}
    </div>
  );
}
