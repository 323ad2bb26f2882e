/**
 * Per-target request parameter rules of a config (applied to the JSON body sent to that target):
 * - `default_params`: set only where the body lacks the key;
 * - `override_params`: forced onto the body (top-level keys replace the client's values);
 * - `drop_params`: removed (top-level names, or dotted paths like `stream_options.include_usage`).
 * Order: defaults, then overrides, then drops. The client's body is never mutated; when a target has no
 * rules the same object is returned.
 */
export interface ParamRules {
  overrideParams?: Record<string, unknown>;
  defaultParams?: Record<string, unknown>;
  dropParams?: string[];
}

export function hasParamRules(rules: ParamRules): boolean {
  return (
    rules.overrideParams !== undefined ||
    rules.defaultParams !== undefined ||
    (rules.dropParams !== undefined && rules.dropParams.length > 0)
  );
}

export function applyParams<T extends Record<string, any>>(body: T, rules: ParamRules): T {
  if (!hasParamRules(rules)) return body;
  const out: Record<string, any> = { ...body };
  if (rules.defaultParams) {
    for (const [key, value] of Object.entries(rules.defaultParams)) if (out[key] === undefined) out[key] = value;
  }
  if (rules.overrideParams) Object.assign(out, rules.overrideParams);
  for (const name of rules.dropParams ?? []) dropPath(out, name);
  return out as T;
}

function dropPath(target: Record<string, any>, path: string): void {
  if (Object.hasOwn(target, path) || !path.includes(".")) {
    delete target[path];
    return;
  }
  const [head, ...rest] = path.split(".");
  const child = target[head!];
  if (typeof child !== "object" || child === null || Array.isArray(child)) return;
  const copy = { ...child };
  dropPath(copy, rest.join("."));
  target[head!] = copy;
}
