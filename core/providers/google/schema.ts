/**
 * JSON Schema (as OpenAI clients send it in tools and `response_format`) -> the OpenAPI-subset Schema object that
 * Gemini's `functionDeclarations[].parameters` and `generationConfig.responseSchema` accept. Gemini answers 400 on
 * any field its Schema message does not have (`additionalProperties`, `$schema`, `$defs`...), so this keeps an
 * allow-list of fields and rewrites the common JSON Schema idioms Gemini lacks: local `$ref`s are inlined,
 * `type: [x, "null"]` and `anyOf: [x, {type: "null"}]` become `nullable`, `oneOf` becomes `anyOf`, `allOf` is merged
 * and `const` becomes a one-value `enum`.
 */

const KEPT = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "items",
  "properties",
  "required",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "anyOf",
  "propertyOrdering",
]);

/** `format` values Gemini accepts, per type; any other format is dropped rather than rejected upstream. */
const FORMATS: Record<string, Set<string>> = {
  string: new Set(["enum", "date-time"]),
  number: new Set(["float", "double"]),
  integer: new Set(["int32", "int64"]),
};

/** Deeper `$ref` chains (recursive schemas) are cut off: Gemini schemas cannot be recursive anyway. */
const MAX_REF_DEPTH = 8;

type Json = Record<string, any>;

export function toGeminiSchema(schema: unknown): Json {
  if (!isObject(schema)) return {};
  return convert(schema, schema, 0);
}

function convert(node: Json, root: Json, refDepth: number): Json {
  if (typeof node.$ref === "string") {
    const target = refDepth < MAX_REF_DEPTH ? resolveRef(root, node.$ref) : undefined;
    const { $ref: _ref, ...siblings } = node;
    if (!target) return convert(siblings, root, refDepth);
    return convert({ ...target, ...siblings }, root, refDepth + 1);
  }

  let source = node;
  if (Array.isArray(node.allOf)) {
    source = mergeAll([withoutKey(node, "allOf"), ...node.allOf.filter(isObject)], root, refDepth);
  }

  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (!KEPT.has(key)) continue;
    out[key] = value;
  }

  if ("const" in source && source.const !== undefined && source.const !== null) {
    out.enum = [String(source.const)];
    out.type ??= "string";
  }

  const variants = Array.isArray(source.anyOf) ? source.anyOf : Array.isArray(source.oneOf) ? source.oneOf : undefined;
  delete out.anyOf;
  if (variants) {
    const objects = variants.filter(isObject);
    const nonNull = objects.filter((variant) => variant.type !== "null");
    if (nonNull.length < objects.length) out.nullable = true;
    if (nonNull.length === 1) {
      // The outer node's own fields (a description next to the anyOf) win over the variant's.
      for (const [key, value] of Object.entries(convert(nonNull[0], root, refDepth))) {
        if (!(key in out)) out[key] = value;
      }
    } else if (nonNull.length > 1) {
      out.anyOf = nonNull.map((variant) => convert(variant, root, refDepth));
    }
  }

  if (Array.isArray(out.type)) {
    const types = out.type.filter((type: unknown) => typeof type === "string" && type !== "null");
    if (types.length < out.type.length) out.nullable = true;
    if (types.length === 1) out.type = types[0];
    else {
      delete out.type;
      if (types.length > 1) out.anyOf = types.map((type: string) => ({ type }));
    }
  }

  if (typeof out.format === "string") {
    const allowed = FORMATS[String(out.type).toLowerCase()];
    if (!allowed?.has(out.format)) delete out.format;
  }

  if (Array.isArray(out.enum)) {
    if (out.enum.every((value: unknown) => typeof value === "string")) out.type ??= "string";
    else if (out.enum.every((value: unknown) => typeof value === "string" || typeof value === "number")) {
      out.enum = out.enum.map(String);
      out.type = "string";
    } else delete out.enum;
  }

  if (isObject(out.properties)) {
    const properties: Json = {};
    for (const [name, value] of Object.entries(out.properties)) {
      if (isObject(value)) properties[name] = convert(value, root, refDepth);
    }
    out.properties = properties;
    if (Array.isArray(out.required)) {
      out.required = out.required.filter((name: unknown) => typeof name === "string" && name in properties);
    }
  } else {
    delete out.properties;
    delete out.required;
  }

  if (out.items !== undefined) {
    const items = Array.isArray(out.items) ? out.items[0] : out.items;
    if (isObject(items)) out.items = convert(items, root, refDepth);
    else delete out.items;
  }

  return out;
}

function mergeAll(parts: Json[], root: Json, refDepth: number): Json {
  const merged: Json = {};
  for (const raw of parts) {
    const part = typeof raw.$ref === "string" ? (resolveRef(root, raw.$ref) ?? {}) : raw;
    const depth = typeof raw.$ref === "string" ? refDepth + 1 : refDepth;
    const resolved = Array.isArray(part.allOf)
      ? mergeAll([withoutKey(part, "allOf"), ...part.allOf], root, depth)
      : part;
    for (const [key, value] of Object.entries(resolved)) {
      if (key === "properties" && isObject(value)) merged.properties = { ...merged.properties, ...value };
      else if (key === "required" && Array.isArray(value))
        merged.required = [...new Set([...(merged.required ?? []), ...value])];
      else if (!(key in merged)) merged[key] = value;
    }
  }
  return merged;
}

/** Resolves `#/$defs/Name`, `#/definitions/Name` and other local JSON pointers. */
function resolveRef(root: Json, ref: string): Json | undefined {
  if (!ref.startsWith("#")) return undefined;
  if (ref === "#") return root;
  let current: any = root;
  for (const raw of ref.slice(2).split("/")) {
    const segment = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isObject(current) && !Array.isArray(current)) return undefined;
    current = (current as any)[segment];
  }
  return isObject(current) ? current : undefined;
}

function withoutKey(node: Json, key: string): Json {
  const { [key]: _dropped, ...rest } = node;
  return rest;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
