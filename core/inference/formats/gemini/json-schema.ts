/**
 * Gemini's Schema object (an OpenAPI 3.0 subset: `type` as `OBJECT`, `STRING`... in either case, `nullable`,
 * `propertyOrdering`) -> the JSON Schema chat providers read in tool parameters and `response_format`. The
 * inverse of core/providers/google/schema.ts. A `parametersJsonSchema` / `responseJsonSchema` already is JSON
 * Schema and is used as it is.
 */

type Json = Record<string, any>;

/** Fields that mean the same in both (after their values are converted). */
const SHARED = [
  "format",
  "title",
  "description",
  "enum",
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
  "default",
  "example",
];

/** Deeper schemas are cut off: tool parameters are never that deep, and the walk must stay bounded. */
const MAX_DEPTH = 32;

export function jsonSchemaOf(schema: unknown, depth = 0): Json {
  if (!isObject(schema) || depth > MAX_DEPTH) return {};
  const out: Json = {};
  for (const key of SHARED) if (schema[key] !== undefined) out[key] = schema[key];
  if (typeof schema.type === "string" && schema.type.toUpperCase() !== "TYPE_UNSPECIFIED") {
    const type = schema.type.toLowerCase();
    out.type = schema.nullable === true ? [type, "null"] : type;
  }
  if (isObject(schema.properties)) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, value]) => [name, jsonSchemaOf(value, depth + 1)]),
    );
  }
  if (schema.items !== undefined) out.items = jsonSchemaOf(schema.items, depth + 1);
  if (Array.isArray(schema.anyOf)) out.anyOf = schema.anyOf.map((variant: unknown) => jsonSchemaOf(variant, depth + 1));
  return out;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
