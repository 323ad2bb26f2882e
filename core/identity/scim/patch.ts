import { type AttrPath, FilterSyntaxError, attributeOf, matchesFilter, parsePatchPath } from "./filter.ts";

/**
 * SCIM PATCH (RFC 7644 3.5.2) applied to a resource's SCIM representation, a plain JSON object; the caller
 * maps the result back onto its records. Covers what Okta and Entra ID send:
 * - Okta: `{"op":"replace","value":{"active":false}}`, `{"op":"add","path":"members","value":[{"value":id}]}`,
 *   `{"op":"remove","path":"members[value eq \"id\"]"}`, `{"op":"replace","path":"members","value":[...]}`;
 * - Entra ID: capitalised ops (`"Replace"`, `"Add"`), `{"op":"Replace","path":"active","value":"False"}`
 *   (booleans as strings), `{"op":"Remove","path":"members","value":[{"value":id}]}`, dotted keys in a
 *   path-less value (`{"name.givenName": "A"}`).
 */

export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

/** A malformed operation: SCIM `invalidPath`, `invalidValue`, `noTarget` or `invalidSyntax` (400). */
export class PatchError extends Error {
  readonly scimType: string;
  constructor(message: string, scimType: string) {
    super(message);
    this.scimType = scimType;
  }
}

/** Attributes whose value is a boolean: Entra ID sends them as "True"/"False". */
const BOOLEAN_ATTRIBUTES = new Set(["active", "primary"]);

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => !!value && typeof value === "object" && !Array.isArray(value);

function keyIn(target: Json, name: string): string {
  const wanted = name.toLowerCase();
  return Object.keys(target).find((key) => key.toLowerCase() === wanted) ?? name;
}

function coerce(name: string, value: unknown): unknown {
  if (BOOLEAN_ATTRIBUTES.has(name.toLowerCase()) && typeof value === "string") {
    if (value.toLowerCase() === "true") return true;
    if (value.toLowerCase() === "false") return false;
    throw new PatchError(`'${name}' must be a boolean.`, "invalidValue");
  }
  return value;
}

/** Multi-valued elements are the same when their `value` is (members, emails). */
function sameElement(a: unknown, b: unknown): boolean {
  if (isObject(a) && isObject(b) && attributeOf(a, "value") !== undefined)
    return attributeOf(a, "value") === attributeOf(b, "value");
  return JSON.stringify(a) === JSON.stringify(b);
}

function addValues(existing: unknown, values: unknown): unknown[] {
  const out = Array.isArray(existing) ? [...existing] : [];
  for (const value of Array.isArray(values) ? values : [values]) {
    const index = out.findIndex((element) => sameElement(element, value));
    if (index >= 0) out[index] = isObject(out[index]) && isObject(value) ? { ...out[index], ...value } : value;
    else out.push(value);
  }
  return out;
}

function pathOf(text: string): AttrPath {
  try {
    return parsePatchPath(text);
  } catch (error) {
    if (error instanceof FilterSyntaxError) throw new PatchError(error.message, "invalidPath");
    throw error;
  }
}

/** Sets (replace) or adds to (add) the attribute at `path`. */
function write(resource: Json, path: AttrPath, value: unknown, mode: "add" | "replace"): void {
  const key = keyIn(resource, path.attribute);
  const current = resource[key];
  if (path.where) {
    if (!Array.isArray(current)) throw new PatchError(`No '${path.attribute}' matches the path's filter.`, "noTarget");
    const matched = current.filter((element) => matchesFilter(path.where!, element));
    if (matched.length === 0) {
      // Entra ID replaces `emails[type eq "work"].value` on a user without one: add the element.
      const seed = seedFromFilter(path);
      if (!seed) throw new PatchError(`No '${path.attribute}' matches the path's filter.`, "noTarget");
      resource[key] = [...current, path.sub ? { ...seed, [path.sub]: coerce(path.sub, value) } : value];
      return;
    }
    resource[key] = current.map((element) => {
      if (!matched.includes(element)) return element;
      if (path.sub) return { ...(element as Json), [keyIn(element as Json, path.sub)]: coerce(path.sub, value) };
      return isObject(element) && isObject(value) ? { ...element, ...value } : value;
    });
    return;
  }
  if (path.sub) {
    const parent = isObject(current) ? { ...current } : {};
    const subKey = keyIn(parent, path.sub);
    parent[subKey] =
      mode === "add" && Array.isArray(parent[subKey]) ? addValues(parent[subKey], value) : coerce(path.sub, value);
    resource[key] = parent;
    return;
  }
  if (mode === "add" && (Array.isArray(current) || Array.isArray(value))) {
    resource[key] = addValues(current, value);
  } else if (mode === "add" && isObject(current) && isObject(value)) {
    resource[key] = { ...current, ...value };
  } else {
    resource[key] = coerce(path.attribute, value);
  }
}

/** `emails[type eq "work"]` -> `{type: "work"}`: the element a filter on one equality would have matched. */
function seedFromFilter(path: AttrPath): Json | undefined {
  const where = path.where;
  if (where?.kind !== "compare" || where.op !== "eq" || where.path.sub || where.path.where) return undefined;
  return { [where.path.attribute]: where.value };
}

function remove(resource: Json, path: AttrPath, value: unknown): void {
  const key = keyIn(resource, path.attribute);
  const current = resource[key];
  if (path.where) {
    if (!Array.isArray(current)) return;
    if (path.sub) {
      resource[key] = current.map((element) => {
        if (!matchesFilter(path.where!, element) || !isObject(element)) return element;
        const { [keyIn(element, path.sub!)]: _dropped, ...rest } = element;
        return rest;
      });
    } else {
      resource[key] = current.filter((element) => !matchesFilter(path.where!, element));
    }
    return;
  }
  if (path.sub) {
    if (isObject(current)) {
      const { [keyIn(current, path.sub)]: _dropped, ...rest } = current;
      resource[key] = rest;
    }
    return;
  }
  // Entra ID removes members by listing them in `value`.
  if (Array.isArray(current) && value !== undefined) {
    const listed = Array.isArray(value) ? value : [value];
    resource[key] = current.filter((element) => !listed.some((item) => sameElement(element, item)));
    return;
  }
  delete resource[key];
}

/** Applies the operations in order to a copy of `resource`; PatchError for one that cannot apply. */
export function applyPatch(resource: Json, operations: PatchOperation[]): Json {
  const result: Json = structuredClone(resource);
  for (const operation of operations) {
    const op = String(operation.op ?? "").toLowerCase();
    if (op !== "add" && op !== "replace" && op !== "remove")
      throw new PatchError(`Unknown PATCH op '${operation.op}'.`, "invalidSyntax");
    if (op === "remove") {
      if (!operation.path) throw new PatchError("A remove operation needs a path.", "noTarget");
      remove(result, pathOf(operation.path), operation.value);
      continue;
    }
    if (operation.value === undefined) throw new PatchError(`An ${op} operation needs a value.`, "invalidValue");
    if (operation.path) {
      write(result, pathOf(operation.path), operation.value, op);
      continue;
    }
    if (!isObject(operation.value))
      throw new PatchError(`An ${op} operation without a path needs an object value.`, "invalidValue");
    for (const [name, value] of Object.entries(operation.value)) {
      // A whole extension object (`"urn:...:enterprise:2.0:User": {...}`) merges under its URN.
      if (/^urn:/i.test(name) && isObject(value) && !/:core:2\.0:/i.test(name)) {
        result[name] = { ...(isObject(result[name]) ? (result[name] as Json) : {}), ...value };
        continue;
      }
      if (/^urn:.*:core:2\.0:(User|Group)$/i.test(name) && isObject(value)) {
        for (const [inner, innerValue] of Object.entries(value)) write(result, pathOf(inner), innerValue, op);
        continue;
      }
      write(result, pathOf(name), value, op);
    }
  }
  return result;
}
