import * as z from "zod";
import type { CheckDefinition } from "../types.ts";

/**
 * `default.regexMatch`: passes when the text matches `rule` (or, with `not`, when it does not). Users' patterns
 * run on RE2 (re2js: linear time, no look-around or back-references), so a hostile pattern cannot hold the
 * event loop; the library is loaded by the first guardrail that uses the check.
 */

export const MAX_PATTERN_LENGTH = 1_000;

let re2: typeof import("re2js") | undefined;

const parameters = z.object({
  rule: z.string().min(1).max(MAX_PATTERN_LENGTH),
  not: z.boolean().default(false),
});

function compiled(rule: string) {
  if (!re2) throw new Error("default.regexMatch: the regex engine is loaded by load() first");
  return re2.RE2JS.compile(rule);
}

export const regexMatch: CheckDefinition<z.infer<typeof parameters>> = {
  id: "default.regexMatch",
  description: "Passes when the text matches a regular expression (RE2 syntax); `not` inverts it.",
  parameters,
  async load() {
    re2 ??= await import("re2js");
  },
  problem({ rule }) {
    try {
      compiled(rule);
      return undefined;
    } catch (error) {
      return `${(error as Error).message} (RE2 syntax: no look-around or back-references)`;
    }
  },
  run(input, { rule, not }) {
    const match = compiled(rule).matcher(input.text);
    const found = match.find();
    const verdict = found !== not;
    return {
      verdict,
      explanation: found
        ? `The text matches the pattern${not ? ", which it must not" : ""}.`
        : `The text does not match the pattern${not ? "" : ", which it must"}.`,
      data: found ? { match: (match.group() ?? "").slice(0, 200) } : {},
    };
  },
};
