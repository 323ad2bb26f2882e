import { RE2JS } from "re2js";
import * as z from "zod";
import { TtlCache } from "../../util/ttl-cache.ts";
import type { CheckDefinition } from "../types.ts";

/**
 * `default.regexMatch`: passes when the text matches `rule` (or, with `not`, when it does not). Users' patterns
 * run on RE2 (re2js: linear time, no look-around or back-references), so a hostile pattern cannot hold the
 * event loop. The module is imported by the first guardrail that uses the check (checks/registry.ts).
 */

export const MAX_PATTERN_LENGTH = 1_000;

const parameters = z.object({
  rule: z.string().min(1).max(MAX_PATTERN_LENGTH),
  not: z.boolean().default(false),
});

// Compiling is the costly part of a pattern; a guardrail runs the same few patterns on every request.
const compiledPatterns = new TtlCache<string, RE2JS>({ ttlMs: Number.POSITIVE_INFINITY, maxEntries: 500 });

function compiled(rule: string): RE2JS {
  let pattern = compiledPatterns.get(rule);
  if (!pattern) {
    pattern = RE2JS.compile(rule);
    compiledPatterns.set(rule, pattern);
  }
  return pattern;
}

export const regexMatch: CheckDefinition<z.infer<typeof parameters>> = {
  id: "default.regexMatch",
  description: "Passes when the text matches a regular expression (RE2 syntax); `not` inverts it.",
  parameters,
  selfContained: () => true,
  problem({ rule }) {
    try {
      compiled(rule);
      return undefined;
    } catch (error) {
      return `${(error as Error).message} (RE2 syntax: no look-around or back-references)`;
    }
  },
  run(input, { rule, not }) {
    const pattern = compiled(rule);
    // test() is several times cheaper than a matcher's find() on re2js, and most texts do not match: where it
    // matched is only looked for when it did.
    const found = pattern.test(input.text);
    const match = found ? pattern.matcher(input.text) : undefined;
    match?.find();
    const verdict = found !== not;
    return {
      verdict,
      explanation: found
        ? `The text matches the pattern${not ? ", which it must not" : ""}.`
        : `The text does not match the pattern${not ? "" : ", which it must"}.`,
      // Where it matched, never what: a pattern may well be written to catch a secret.
      data: match ? { match_start: match.start(), match_length: match.end() - match.start() } : {},
    };
  },
};
