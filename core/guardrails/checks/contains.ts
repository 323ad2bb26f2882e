import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { listExplanation, listOperator, listVerdict } from "./list-operator.ts";

/**
 * `default.contains`: looks for words or phrases in the text. `operator` `any` (default) passes when one is
 * there, `all` when every one is, `none` when none is. Words match whole (a word never matches inside a longer
 * word) and ignore case, unless `wholeWords` / `caseSensitive` say otherwise. The verdict names the words
 * found, never the text.
 *
 * Whole-word matching is linear in the text: the text is cut once into tokens (runs of letters and digits, and
 * each other visible character on its own), a word is cut the same way, and a word matches where its tokens
 * follow each other in the text's. Scripts written without spaces (Chinese, Japanese, Thai...) are cut one
 * character a token, so their words match anywhere, as a reader of those scripts expects.
 */

export const MAX_WORDS = 500;

const parameters = z.object({
  words: z
    .array(
      z
        .string()
        .max(200)
        .refine((word) => word.trim().length > 0, "a word must not be empty or only spaces"),
    )
    .min(1)
    .max(MAX_WORDS),
  operator: listOperator.default("any"),
  /** false: a word also matches inside a longer word ("cat" in "concatenate"). */
  wholeWords: z.boolean().default(true),
  caseSensitive: z.boolean().default(false),
});

type Parameters = z.infer<typeof parameters>;

const UNSPACED_SCRIPT = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}`;
// One character of an unspaced script; a run of other letters, marks, digits and `_`; any other visible character.
const TOKEN = new RegExp(
  String.raw`[${UNSPACED_SCRIPT}]|[[\p{L}\p{M}\p{N}_]--[${UNSPACED_SCRIPT}]]+|[^\s\p{L}\p{M}\p{N}_]`,
  "gv",
);

const tokens = (text: string): string[] => text.match(TOKEN) ?? [];

function foundWholeWords(text: string, words: readonly string[]): Set<string> {
  const textTokens = tokens(text);
  const single = new Set(textTokens);
  let spaced: string | undefined; // " tok tok tok ": built only when a word has several tokens
  const found = new Set<string>();
  for (const word of words) {
    const wordTokens = tokens(word);
    if (wordTokens.length === 1) {
      if (single.has(wordTokens[0]!)) found.add(word);
      continue;
    }
    spaced ??= ` ${textTokens.join(" ")} `;
    if (spaced.includes(` ${wordTokens.join(" ")} `)) found.add(word);
  }
  return found;
}

function foundSubstrings(text: string, words: readonly string[]): Set<string> {
  return new Set(words.filter((word) => text.includes(word)));
}

export const contains: CheckDefinition<Parameters> = {
  id: "default.contains",
  description:
    "Passes when any, all or none of the given words or phrases appear in the text (whole words, any case, by default).",
  parameters,
  selfContained: () => true,
  run(input, { words, operator, wholeWords, caseSensitive }) {
    const fold = (value: string) => (caseSensitive ? value : value.toLowerCase());
    const text = fold(input.text);
    const folded = words.map(fold);
    const foundFolded = wholeWords ? foundWholeWords(text, folded) : foundSubstrings(text, folded);
    const found = words.filter((_, index) => foundFolded.has(folded[index]!));
    const missing = words.filter((_, index) => !foundFolded.has(folded[index]!));
    const verdict = listVerdict(operator, found.length, missing.length);
    return {
      verdict,
      explanation: listExplanation(
        operator,
        verdict,
        found.length,
        words.length,
        words.length === 1 ? "word" : "words",
      ),
      data: { operator, found_words: found, missing_words: missing },
    };
  },
};
