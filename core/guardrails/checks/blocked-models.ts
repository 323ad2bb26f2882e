import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { readsNoText } from "../budget.ts";
import { matchingEntry, modelList } from "./model-patterns.ts";

/**
 * `default.blockedModels`: fails when the model the request asks for is in `models` (names, or prefixes ending
 * in `*`). Input phase. A request that names no model passes (its config chooses one; block that model by name).
 */

const parameters = z.object({ models: modelList });

type Parameters = z.infer<typeof parameters>;

export const blockedModels: CheckDefinition<Parameters> = {
  id: "default.blockedModels",
  description: "Fails when the requested model is in the blocked list (names or `prefix*`).",
  phases: ["input"],
  parameters,
  cost: readsNoText,
  selfContained: () => true,
  run(input, { models }) {
    const model = input.model;
    const entry = model ? matchingEntry(models, model) : undefined;
    return {
      verdict: entry === undefined,
      explanation: entry
        ? `The request asks for '${model.slice(0, 256)}', which is blocked (${entry}).`
        : model
          ? `The request asks for '${model.slice(0, 256)}', which is not blocked.`
          : "The request names no model.",
      data: { model: model.slice(0, 256), blocked: entry !== undefined, ...(entry ? { matched: entry } : {}) },
    };
  },
};
