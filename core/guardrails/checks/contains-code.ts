import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { codeRuns } from "./code-signals.ts";
import { languageNamed, languageNames, NOT_CODE } from "./code-languages.ts";
import { splitFences } from "./fenced-blocks.ts";

/**
 * `default.containsCode`: passes when the text contains code; with `format` (Portkey's parameter: `Python`,
 * `SQL`, `C#`... or a fence tag such as `py`), code in that language; `not` inverts (a guardrail that keeps code
 * out of answers). Code is a fenced block tagged with a code language, or code found by its syntax outside fences
 * and in untagged or plain-text fences (code-signals.ts). Blocks of data or prose (```json, ```yaml, ```markdown,
 * ```text) count only when `format` names their format. The verdict names the blocks' languages and sizes.
 */

const parameters = z.object({
  format: z
    .string()
    .max(40)
    .optional()
    .transform((format, context) => {
      if (format === undefined) return undefined;
      const name = languageNamed(format.trim());
      if (!name) {
        context.addIssue({
          code: "custom",
          message: `unknown format '${format}'; one of ${languageNames().join(", ")} (or a fence tag such as py)`,
        });
        return z.NEVER;
      }
      return name;
    }),
  not: z.boolean().default(false),
});

type Parameters = z.infer<typeof parameters>;

interface FoundBlock {
  language?: string;
  fenced: boolean;
  lines: number;
}

export function codeBlocks(text: string): FoundBlock[] {
  const { blocks, outside } = splitFences(text);
  const found: FoundBlock[] = [];
  for (const block of blocks) {
    const lines = block.content.split("\n");
    const named = block.language ? languageNamed(block.language) : undefined;
    if (block.language && named !== "Text") {
      // A tagged block: code in that language (an unknown tag is code too: ```elixir), or data in that format.
      found.push({ language: named ?? block.language, fenced: true, lines: lines.length });
    } else {
      for (const run of codeRuns(lines, true)) found.push({ ...run, fenced: true });
    }
  }
  for (const stretch of outside) for (const run of codeRuns(stretch)) found.push({ ...run, fenced: false });
  return found;
}

export const containsCode: CheckDefinition<Parameters> = {
  id: "default.containsCode",
  description: "Passes when the text contains code (in `format`, when given); `not` inverts it.",
  parameters,
  selfContained: () => true,
  run(input, { format, not }) {
    const blocks = codeBlocks(input.text);
    const counted = blocks.filter((block) =>
      format ? block.language === format : !(block.language && NOT_CODE.has(block.language)),
    );
    const found = counted.length > 0;
    const verdict = found !== not;
    const what = format ? `${format} code` : "code";
    const languages = [...new Set(counted.map((block) => block.language ?? "unknown"))];
    return {
      verdict,
      explanation: found
        ? `The text contains ${what} (${counted.length} ${counted.length === 1 ? "block" : "blocks"}: ${languages.join(", ")})${not ? ", which it must not" : ""}.`
        : `The text contains no ${what}${not ? "" : ", which it must"}.`,
      data: {
        found,
        format,
        not,
        blocks: counted
          .slice(0, 20)
          .map((block) => ({ language: block.language ?? "unknown", fenced: block.fenced, lines: block.lines })),
      },
    };
  },
};
