import * as z from "zod";

/**
 * The model lists of `default.modelWhitelist` and `default.blockedModels`: each entry is a model name, or a
 * prefix ending in `*` (`gpt-4o*`, `claude-*`, `*` for every model). Names compare without regard to case:
 * providers take `GPT-4o` for `gpt-4o`, and a blocked model must not get through in capitals.
 */

export const modelList = z
  .array(
    z
      .string()
      .min(1)
      .max(256)
      .refine((entry) => !entry.slice(0, -1).includes("*"), "`*` may only end a model name (a prefix)"),
  )
  .min(1)
  .max(1_000);

/** The first entry naming `model`, or undefined. */
export function matchingEntry(entries: readonly string[], model: string): string | undefined {
  const name = model.toLowerCase();
  return entries.find((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : name === pattern;
  });
}
