import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { jsonInText } from "./json-in-text.ts";
import { listExplanation, listOperator, listVerdict } from "./list-operator.ts";

/**
 * `default.jsonKeys`: looks for top-level keys in the JSON object the text carries (the whole text, a ```json
 * block, or the object an answer wraps in a sentence). `operator` `any` (default), `all` or `none`. When the
 * text carries several objects, one that passes is enough. No JSON object in the text fails the check.
 */

const parameters = z.object({
  keys: z.array(z.string().min(1).max(200)).min(1).max(500),
  operator: listOperator.default("any"),
});

type Parameters = z.infer<typeof parameters>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export const jsonKeys: CheckDefinition<Parameters> = {
  id: "default.jsonKeys",
  description: "Passes when any, all or none of the given keys are top-level keys of the JSON object in the text.",
  parameters,
  selfContained: () => true,
  run(input, { keys, operator }) {
    const objects = jsonInText(input.text).filter(isObject);
    if (objects.length === 0) {
      return { verdict: false, explanation: "The text carries no JSON object.", data: { operator, json_found: false } };
    }
    // The object that passes, else the one holding the most keys (the best account of why the check failed).
    let best: { present: string[]; missing: string[]; verdict: boolean } | undefined;
    for (const object of objects) {
      const present = keys.filter((key) => Object.hasOwn(object, key));
      const missing = keys.filter((key) => !Object.hasOwn(object, key));
      const verdict = listVerdict(operator, present.length, missing.length);
      if (!best || verdict || (!best.verdict && present.length > best.present.length))
        best = { present, missing, verdict };
      if (verdict) break;
    }
    const { present, missing, verdict } = best!;
    return {
      verdict,
      explanation: listExplanation(operator, verdict, present.length, keys.length, keys.length === 1 ? "key" : "keys"),
      data: { operator, json_found: true, present_keys: present, missing_keys: missing },
    };
  },
};
