import * as z from "zod";

/**
 * The `operator` of the checks that look for a list of things (words, JSON keys, metadata keys): the check passes
 * when `any` of them is there, when `all` are, or when `none` is.
 */
export const listOperator = z.enum(["any", "all", "none"]);
export type ListOperator = z.infer<typeof listOperator>;

export function listVerdict(operator: ListOperator, found: number, missing: number): boolean {
  if (operator === "any") return found > 0;
  if (operator === "all") return missing === 0;
  return found === 0;
}

/** "all 3 words were found", "none of the 2 keys may be there, but 1 was"... for the check's explanation. */
export function listExplanation(operator: ListOperator, verdict: boolean, found: number, total: number, noun: string) {
  const present = `${found} of the ${total} ${noun} ${found === 1 ? "is" : "are"} present`;
  const rule = { any: `at least one must be`, all: `all must be`, none: `none may be` }[operator];
  return `${verdict ? "Passed" : "Failed"}: ${present}, and ${rule}.`;
}
