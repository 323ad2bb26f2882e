import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { countBound, judgeCount, rangeProblem, segmenterLocale } from "./count-range.ts";

/**
 * `default.sentenceCount`: passes when the number of sentences is within `minSentences`..`maxSentences`
 * (Portkey's names); `not` inverts. Sentences are found by `Intl.Segmenter` (so "Dr. Smith arrived at 3.30."
 * is one sentence, and 。！？ end sentences too); a segment without a letter or digit is not a sentence.
 */

const parameters = z.object({
  minSentences: countBound,
  maxSentences: countBound,
  not: z.boolean().default(false),
  locale: segmenterLocale,
});

type Parameters = z.infer<typeof parameters>;

const HAS_WORD_CHARACTER = /[\p{L}\p{N}]/u;

export function countSentences(text: string, locale?: string): number {
  let count = 0;
  for (const { segment } of new Intl.Segmenter(locale, { granularity: "sentence" }).segment(text)) {
    if (HAS_WORD_CHARACTER.test(segment)) count++;
  }
  return count;
}

export const sentenceCount: CheckDefinition<Parameters> = {
  id: "default.sentenceCount",
  description: "Passes when the text has between `minSentences` and `maxSentences` sentences; `not` inverts it.",
  parameters,
  selfContained: () => true,
  problem: ({ minSentences, maxSentences }) => rangeProblem(minSentences, maxSentences, "minSentences", "maxSentences"),
  run(input, { minSentences, maxSentences, not, locale }) {
    const count = countSentences(input.text, locale);
    return judgeCount(count, { min: minSentences, max: maxSentences, not }, count === 1 ? "sentence" : "sentences");
  },
};
