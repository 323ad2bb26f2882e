/**
 * Structured outputs for the mock upstreams: OpenAI (`response_format` / `text.format` of type `json_schema`) and
 * Anthropic (`output_config.format`) answer text that is JSON conforming to the request's schema. The mocks make
 * the simplest conforming value: every property present, the first enum value or a value of the declared type.
 */
export function instanceOf(schema: any): unknown {
  if (!schema || typeof schema !== "object") return null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ("const" in schema) return schema.const;
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length > 0) return instanceOf(variants[0]);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  switch (type) {
    case "object":
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([name, value]) => [name, instanceOf(value)]),
      );
    case "array":
      return [instanceOf(schema.items)];
    case "string":
      return "mock";
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return true;
    default:
      return null;
  }
}

/** The structured-output schema an OpenAI chat or Responses body asks for, if any. */
export function requestedSchema(body: any): unknown {
  if (body?.response_format?.type === "json_schema") return body.response_format.json_schema?.schema ?? {};
  if (body?.text?.format?.type === "json_schema") return body.text.format.schema ?? {};
  return undefined;
}
