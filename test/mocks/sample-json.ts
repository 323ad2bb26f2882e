/**
 * A value that fits a JSON Schema, as a model asked for structured output (or a tool's input) would write one:
 * every property filled, the first enum value or variant, one array item. Mocks answer with it so that
 * clients which parse and check the answer against their schema (LangChain, the AI SDK) accept it.
 */
export function sampleFor(schema: any, depth = 0): unknown {
  if (!schema || typeof schema !== "object" || depth > 8) return null;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if ("const" in schema) return schema.const;
  const variant = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variant) && variant.length)
    return sampleFor(variant.find((v: any) => v?.type !== "null") ?? variant[0], depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  switch (type) {
    case "object":
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([name, value]) => [name, sampleFor(value, depth + 1)]),
      );
    case "array":
      return [sampleFor(schema.items, depth + 1)];
    case "string":
      return "Paris";
    case "integer":
    case "number":
      return 21;
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return schema.properties ? sampleFor({ ...schema, type: "object" }, depth) : "Paris";
  }
}

/** The structured-output schema an OpenAI chat or Responses body asks for, if any. */
export function requestedSchema(body: any): unknown {
  if (body?.response_format?.type === "json_schema") return body.response_format.json_schema?.schema ?? {};
  if (body?.text?.format?.type === "json_schema") return body.text.format.schema ?? {};
  return undefined;
}
