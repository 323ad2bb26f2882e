import { Field } from "../../ui/index.ts";

interface SecretInputProps {
  label: string;
  /** The masked hint the API answers (`sk-********abcd`), or null when none is stored. */
  hint: string | null;
  /** What the user typed; empty means "keep the stored value" (the field is then not sent). */
  value: string;
  onInput: (value: string) => void;
  error?: string | null;
}

/**
 * A write-only credential: the stored value is never read back, only its masked hint is shown; a new value is
 * sent only when one is typed (the caller leaves the field out of the body when `value` is empty).
 */
export function SecretInput({ label, hint, value, onInput, error }: SecretInputProps) {
  return (
    <Field
      label={label}
      error={error}
      hint={hint ? `Stored: ${hint}. Leave empty to keep it; type a new value to replace it.` : "Write-only."}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type="password"
          autoComplete="new-password"
          spellcheck={false}
          value={value}
          placeholder={hint ?? ""}
          aria-describedby={describedBy}
          aria-invalid={invalid ? "true" : undefined}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** Adds `name: value` to a body only when something was typed (write-only fields are never sent blank). */
export function withTyped<T extends Record<string, unknown>>(body: T, name: string, value: string): T {
  return value.trim() === "" ? body : { ...body, [name]: value };
}
