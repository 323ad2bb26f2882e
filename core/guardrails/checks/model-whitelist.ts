import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { readsNoText } from "../budget.ts";
import { matchingEntry, modelList } from "./model-patterns.ts";

/**
 * `default.modelWhitelist` (also `default.allowedModels`): passes when the model the request asks for is in
 * `models` (names, or prefixes ending in `*`); `not` inverts, as in Portkey's. Input phase. A request that names
 * no model (its config supplies one) is not allowed: the list cannot vouch for it.
 */

const parameters = z.object({
  models: modelList,
  not: z.boolean().default(false),
});

type Parameters = z.infer<typeof parameters>;

export const modelWhitelist: CheckDefinition<Parameters> = {
  id: "default.modelWhitelist",
  aliases: ["default.allowedModels", "default.modelwhitelist"],
  description: "Passes when the requested model is in the allowed list (names or `prefix*`); `not` inverts it.",
  phases: ["input"],
  parameters,
  cost: readsNoText,
  selfContained: () => true,
  run(input, { models, not }) {
    const model = input.model;
    const entry = model ? matchingEntry(models, model) : undefined;
    const verdict = (entry !== undefined) !== not;
    const shown = model ? `'${model.slice(0, 256)}'` : "no model";
    return {
      verdict,
      explanation: entry
        ? `The request asks for ${shown}, which the list allows (${entry})${not ? "; the check is inverted" : ""}.`
        : `The request asks for ${shown}, which the list does not allow${not ? "; the check is inverted" : ""}.`,
      data: { model: model.slice(0, 256), allowed: entry !== undefined, ...(entry ? { matched: entry } : {}), not },
    };
  },
};
