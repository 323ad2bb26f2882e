import * as z from "zod";
import type { CheckResult } from "../types.ts";

/**
 * What the counting checks (`default.wordCount`, `default.sentenceCount`, `default.characterCount`) share: a
 * bound is a whole number; at least one of the two is given; the text passes when its count is within them
 * (or, with `not`, when it is outside).
 */

export const countBound = z.number().int().nonnegative().optional();

/** Also refuses a range with no bound (a check that passes everything is a mistake) or one upside down. */
export function rangeProblem(min: number | undefined, max: number | undefined, minName: string, maxName: string) {
  if (min === undefined && max === undefined) return `give ${minName}, ${maxName} or both`;
  if (min !== undefined && max !== undefined && min > max) return `${minName} (${min}) is above ${maxName} (${max})`;
  return undefined;
}

export function judgeCount(
  count: number,
  range: { min: number | undefined; max: number | undefined; not: boolean },
  unit: string,
): CheckResult {
  const { min, max, not } = range;
  const inRange = (min === undefined || count >= min) && (max === undefined || count <= max);
  const verdict = inRange !== not;
  const bounds =
    min !== undefined && max !== undefined
      ? `between ${min} and ${max}`
      : min !== undefined
        ? `at least ${min}`
        : `at most ${max}`;
  return {
    verdict,
    explanation: `The text has ${count} ${unit}; it must ${not ? "not " : ""}have ${bounds}.`,
    data: { count, min, max, not },
  };
}

/** `locale`: a BCP 47 tag for the word and sentence rules of `Intl.Segmenter` (default: the runtime's). */
export const segmenterLocale = z
  .string()
  .max(35)
  .refine((tag) => {
    try {
      Intl.Segmenter.supportedLocalesOf(tag); // throws a RangeError on a malformed tag
      return true;
    } catch {
      return false;
    }
  }, "not a valid BCP 47 language tag")
  .optional();
