import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { countBound, judgeCount, rangeProblem } from "./count-range.ts";

/**
 * `default.characterCount`: passes when the number of characters is within `minCharacters`..`maxCharacters`
 * (Portkey's names); `not` inverts. A character is what a reader sees as one (a grapheme: an emoji with its
 * modifiers, a letter with its accents), not a UTF-16 unit as `String.length` counts.
 */

const parameters = z.object({
  minCharacters: countBound,
  maxCharacters: countBound,
  not: z.boolean().default(false),
});

type Parameters = z.infer<typeof parameters>;

// Printable ASCII, tabs and line feeds: one character per UTF-16 unit, so no segmenting is needed.
const SIMPLE_TEXT = /^[\x20-\x7e\t\n]*$/;
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

export function countCharacters(text: string): number {
  if (SIMPLE_TEXT.test(text)) return text.length;
  let count = 0;
  for (const _ of graphemes.segment(text)) count++;
  return count;
}

export const characterCount: CheckDefinition<Parameters> = {
  id: "default.characterCount",
  description:
    "Passes when the text has between `minCharacters` and `maxCharacters` characters (as a reader counts them); `not` inverts it.",
  parameters,
  selfContained: () => true,
  problem: ({ minCharacters, maxCharacters }) =>
    rangeProblem(minCharacters, maxCharacters, "minCharacters", "maxCharacters"),
  run(input, { minCharacters, maxCharacters, not }) {
    const count = countCharacters(input.text);
    return judgeCount(count, { min: minCharacters, max: maxCharacters, not }, count === 1 ? "character" : "characters");
  },
};
