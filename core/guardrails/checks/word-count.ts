import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { countBound, judgeCount, rangeProblem, segmenterLocale } from "./count-range.ts";

/**
 * `default.wordCount`: passes when the number of words is within `minWords`..`maxWords` (Portkey's names);
 * `not` inverts. Words are counted by `Intl.Segmenter`, which knows where words end in languages written
 * without spaces too; punctuation and spaces are not words.
 */

const parameters = z.object({
  minWords: countBound,
  maxWords: countBound,
  not: z.boolean().default(false),
  locale: segmenterLocale,
});

type Parameters = z.infer<typeof parameters>;

export function countWords(text: string, locale?: string): number {
  let count = 0;
  for (const segment of new Intl.Segmenter(locale, { granularity: "word" }).segment(text)) {
    if (segment.isWordLike) count++;
  }
  return count;
}

export const wordCount: CheckDefinition<Parameters> = {
  id: "default.wordCount",
  description: "Passes when the text has between `minWords` and `maxWords` words; `not` inverts it.",
  parameters,
  selfContained: () => true,
  problem: ({ minWords, maxWords }) => rangeProblem(minWords, maxWords, "minWords", "maxWords"),
  run(input, { minWords, maxWords, not, locale }) {
    const count = countWords(input.text, locale);
    return judgeCount(count, { min: minWords, max: maxWords, not }, count === 1 ? "word" : "words");
  },
};
