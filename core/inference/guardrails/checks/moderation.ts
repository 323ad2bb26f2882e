import * as z from "zod";
import { isPlainObject } from "../../routing/query.ts";
import { OPENAI_MODERATION_CATEGORIES } from "../../../providers/types.ts";
import type { CheckDefinition } from "../types.ts";
import { configParameter, inferJson, modelParameter } from "./sub-request.ts";

/**
 * `default.moderation` (Portkey's `portkey.moderateContent`): sends the text to a moderation model through the
 * gateway (`/moderations` of the provider `config` routes to) and fails when the answer flags it: when any of
 * `categories` is flagged, or without `categories` when the answer's `flagged` is true. With `threshold`, a
 * category counts as flagged when its score reaches the threshold (the provider's own flags are then not read).
 */

const parameters = z.object({
  config: configParameter,
  model: modelParameter.default("omni-moderation-latest"),
  categories: z
    .array(
      z.enum(OPENAI_MODERATION_CATEGORIES, {
        error: () => `expected one of ${OPENAI_MODERATION_CATEGORIES.join(", ")}`,
      }),
    )
    .min(1)
    .max(OPENAI_MODERATION_CATEGORIES.length)
    .optional(),
  threshold: z.number().min(0).max(1).optional(),
});

type Parameters = z.infer<typeof parameters>;

/** The part of OpenAI's moderation answer the check reads (`results[0]`). */
interface ModerationResult {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores?: Record<string, number>;
}

export const moderation: CheckDefinition<Parameters> = {
  id: "default.moderation",
  aliases: ["portkey.moderateContent"],
  description:
    "Sends the text to a moderation model through the gateway and fails when it is flagged (in `categories`, " +
    "or at all); `threshold` judges by the category scores instead of the model's flags.",
  parameters,
  async run(input, { config, model, categories, threshold }) {
    if (!input.text.trim()) return { verdict: true, explanation: "There is no text to moderate.", data: {} };
    const answer = await inferJson(input, "moderations", { model, input: input.text }, config);
    const result = firstResult(answer, threshold !== undefined);

    // The categories the answer flags: by the model's own flags, or by their scores against the threshold.
    const flagged =
      threshold === undefined
        ? Object.keys(result.categories).filter((name) => result.categories[name] === true)
        : Object.keys(result.category_scores!).filter((name) => result.category_scores![name]! >= threshold);
    const named = categories ? flagged.filter((name) => categories.includes(name as never)) : flagged;
    const fails = categories || threshold !== undefined ? named.length > 0 : result.flagged;

    const data: Record<string, unknown> = { flagged_categories: named, model };
    if (result.category_scores) data.scores = pick(result.category_scores, categories ?? flagged);
    if (!fails) {
      return { verdict: true, explanation: "The moderation model flagged none of the restricted categories.", data };
    }
    return {
      verdict: false,
      explanation: `The moderation model flagged the text${named.length ? `: ${named.join(", ")}` : ""}.`,
      data,
    };
  },
};

/** `results[0]` of an OpenAI moderation answer, checked: a malformed answer is an error, not a pass. */
function firstResult(answer: Record<string, unknown>, needsScores: boolean): ModerationResult {
  const result = Array.isArray(answer.results) ? answer.results[0] : undefined;
  const valid =
    isPlainObject(result) &&
    typeof result.flagged === "boolean" &&
    isPlainObject(result.categories) &&
    Object.values(result.categories).every((value) => typeof value === "boolean" || value === null) &&
    (result.category_scores === undefined ||
      (isPlainObject(result.category_scores) &&
        Object.values(result.category_scores).every((value) => typeof value === "number")));
  if (!valid) throw new Error("the moderation answer has no results[0] with flagged and categories");
  if (needsScores && result.category_scores === undefined) {
    throw new Error("the moderation answer has no category_scores to compare with the threshold");
  }
  return result as unknown as ModerationResult;
}

function pick(scores: Record<string, number>, names: readonly string[]): Record<string, number> {
  return Object.fromEntries(names.filter((name) => name in scores).map((name) => [name, scores[name]!]));
}
