import { Ajv, type AnySchemaObject, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import type { RegExpEngine } from "ajv/dist/types/index.js";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import { RE2JS } from "re2js";
import * as z from "zod";
import { sha256Hex } from "../../ids.ts";
import { withinJsonDepth } from "../../util/json-depth.ts";
import { TtlCache } from "../../util/ttl-cache.ts";
import type { CheckDefinition } from "../types.ts";
import { jsonInText } from "./json-in-text.ts";

/**
 * `default.jsonSchema`: passes when the text carries JSON (the whole text, a ```json block, or the object an
 * answer wraps in a sentence) that the JSON Schema `schema` accepts; `not` inverts. Validated with ajv, which is
 * CommonJS: imported statically here, and this module is imported by the registry on first use.
 *
 * The schema's draft is read from its `$schema` (2020-12 when absent; 2019-09 and draft-07 also). `format` is an
 * annotation, as 2020-12 has it by default. The schema's `pattern`s run on RE2 (linear time): a pattern RE2
 * cannot compile (look-around, back-references) is refused when the guardrail is saved. `$ref`s resolve only
 * inside the schema: nothing is fetched.
 */

const MAX_SCHEMA_CHARACTERS = 100_000;

const parameters = z.object({
  schema: z.preprocess(
    // Portkey's UI may hand the schema over as JSON text.
    (value) => (typeof value === "string" ? parsedOrSame(value) : value),
    z
      .record(z.string(), z.unknown())
      .refine((schema) => JSON.stringify(schema).length <= MAX_SCHEMA_CHARACTERS, {
        message: `the schema is larger than ${MAX_SCHEMA_CHARACTERS} characters`,
      })
      .refine(withinJsonDepth, { message: "the schema nests too deep" }),
  ),
  not: z.boolean().default(false),
});

type Parameters = z.infer<typeof parameters>;

function parsedOrSame(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// ajv asks for `new RegExp(pattern, "u")`; RE2 gives the same answers for what it accepts, in linear time.
// ajv shares compiled patterns by their `toString()`, so each must name its own pattern.
const re2Engine: RegExpEngine = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(pattern);
    return { test: (value: string) => compiled.matcher(value).find(), toString: () => `re2:${pattern}` };
  },
  { code: "re2" },
);

const options: Options = {
  strict: false,
  allErrors: false,
  validateFormats: false,
  logger: false,
  code: { regExp: re2Engine },
};
const validators = { draft7: new Ajv(options), draft2019: new Ajv2019(options), draft2020: new Ajv2020(options) };

function validatorFor(schema: AnySchemaObject) {
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  if (declared === "") return validators.draft2020;
  if (declared.includes("2020-12")) return validators.draft2020;
  if (declared.includes("2019-09")) return validators.draft2019;
  if (declared.includes("draft-07")) return validators.draft7;
  throw new Error(`unsupported $schema '${declared.slice(0, 100)}' (2020-12, 2019-09 or draft-07)`);
}

// Compiling is the slow part; guardrails reuse few schemas. Keyed by a hash of the schema text.
const compiledSchemas = new TtlCache<string, ValidateFunction>({ ttlMs: Number.POSITIVE_INFINITY, maxEntries: 200 });

function compiled(schema: AnySchemaObject): ValidateFunction {
  const key = sha256Hex(JSON.stringify(schema));
  let validate = compiledSchemas.get(key);
  if (!validate) {
    const ajv = validatorFor(schema);
    // Removing the schema below also removes what its `$id` names: it must not name one ajv holds (a meta-schema).
    const id = typeof schema.$id === "string" ? schema.$id.replace(/#$/, "") : undefined;
    if (id && ajv.getSchema(id)) throw new Error(`$id '${id.slice(0, 100)}' names a schema the validator holds`);
    try {
      validate = ajv.compile(schema);
    } finally {
      // ajv keeps every schema it compiled (and refuses a second one with the same $id): our cache is the bound.
      ajv.removeSchema(schema);
    }
    compiledSchemas.set(key, validate);
  }
  return validate;
}

const describe = (error: ErrorObject) => `${error.instancePath || "/"} ${error.message ?? "is invalid"}`;

export const jsonSchema: CheckDefinition<Parameters> = {
  id: "default.jsonSchema",
  description: "Passes when the text carries JSON that a JSON Schema accepts; `not` inverts it.",
  parameters,
  selfContained: () => true,
  problem({ schema }) {
    try {
      compiled(schema);
      return undefined;
    } catch (error) {
      return `the schema does not compile: ${(error as Error).message}`;
    }
  },
  run(input, { schema, not }) {
    const validate = compiled(schema);
    const candidates = jsonInText(input.text);
    if (candidates.length === 0) {
      return {
        verdict: not,
        explanation: "The text carries no JSON object or array.",
        data: { json_found: false, not },
      };
    }
    let firstError: string | undefined;
    const valid = candidates.some((candidate) => {
      if (validate(candidate)) return true;
      firstError ??= validate.errors?.[0] ? describe(validate.errors[0]) : "invalid";
      return false;
    });
    const verdict = valid !== not;
    return {
      verdict,
      explanation: valid
        ? `The JSON matches the schema${not ? ", which it must not" : ""}.`
        : `The JSON does not match the schema (${firstError})${not ? "" : ", which it must"}.`,
      data: { json_found: true, valid, not, ...(valid ? {} : { error: firstError }) },
    };
  },
};
