import { useId, useMemo, useState } from "preact/hooks";
// The very list the API validates `scopes[]` against (pure data, bundled at build time): the picker offers
// exactly the scopes a key may hold, and grows with the API.
import { ALL_SCOPES } from "../../../../core/auth/scope-list.ts";

interface ScopePickerProps {
  value: string[];
  onChange: (scopes: string[]) => void;
  /** The `param` of the last save's error (`scopes[3]`), shown beside the picker. */
  error?: string | null;
}

/** Groups `logs.list`, `logs.view`... under `logs`. */
function groupScopes(scopes: readonly string[]): Array<[string, string[]]> {
  const groups = new Map<string, string[]>();
  for (const scope of scopes) {
    const resource = scope.split(".")[0];
    groups.set(resource, [...(groups.get(resource) ?? []), scope]);
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
}

/** Multi-select of scopes: `*` (all), or checkboxes grouped by resource, with a filter for long lists. */
export function ScopePicker({ value, onChange, error }: ScopePickerProps) {
  const id = useId();
  const [filter, setFilter] = useState("");
  const groups = useMemo(() => groupScopes(ALL_SCOPES), []);
  const chosen = new Set(value);
  const all = chosen.has("*");
  const toggle = (scope: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(scope);
    else next.delete(scope);
    onChange([...next]);
  };
  const needle = filter.trim().toLowerCase();
  const shown = groups
    .map(([resource, scopes]) => [resource, scopes.filter((scope) => scope.includes(needle))] as const)
    .filter(([, scopes]) => scopes.length > 0);
  return (
    <fieldset class="scope-picker" aria-describedby={error ? `${id}-error` : undefined}>
      <legend>
        Scopes <span class="scope-count">({all ? "all" : value.length} chosen)</span>
      </legend>
      <label class="check">
        <input type="checkbox" checked={all} onChange={(event) => toggle("*", event.currentTarget.checked)} />
        <code>*</code> every scope (only a key holding <code>*</code> can grant it)
      </label>
      {!all && (
        <>
          <div class="field">
            <label for={`${id}-filter`}>Filter scopes</label>
            <input
              id={`${id}-filter`}
              type="search"
              value={filter}
              placeholder="e.g. logs"
              onInput={(event) => setFilter(event.currentTarget.value)}
            />
          </div>
          <div class="scope-groups">
            {shown.map(([resource, scopes]) => (
              <fieldset key={resource} class="scope-group">
                <legend>{resource}</legend>
                {scopes.map((scope) => (
                  <label key={scope} class="check">
                    <input
                      type="checkbox"
                      name="scope"
                      value={scope}
                      checked={chosen.has(scope)}
                      onChange={(event) => toggle(scope, event.currentTarget.checked)}
                    />
                    {scope.slice(resource.length + 1)}
                  </label>
                ))}
              </fieldset>
            ))}
          </div>
        </>
      )}
      {error && (
        <small id={`${id}-error`} class="field-error" role="alert">
          {error}
        </small>
      )}
    </fieldset>
  );
}
