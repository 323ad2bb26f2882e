import { OPENAI_MODERATION_CATEGORIES, UpstreamError } from "../types.ts";

/**
 * Mistral's moderation API (https://docs.mistral.ai/api/#tag/classifiers, `POST /v1/moderations`): the body is
 * `{model, input}` with `input` a string or a list of strings; the answer is `{id, model, results[]}`, each result
 * `{categories, category_scores}` over Mistral's own nine categories. Answered in OpenAI's moderation shape
 * (spec 2.10): the eleven OpenAI categories and the two `illicit` ones OpenAI's current moderation object requires,
 * those Mistral has no counterpart for false and 0, and every Mistral category kept under `mistral` so nothing the
 * provider said is lost. Loaded by the route's first request (moderations-route.ts).
 */

/** Mistral categories with a direct OpenAI counterpart. */
const COUNTERPARTS: Readonly<Record<string, (typeof OPENAI_MODERATION_CATEGORIES)[number]>> = {
  sexual: "sexual",
  hate_and_discrimination: "hate",
  violence_and_threats: "violence",
  selfharm: "self-harm",
  // OpenAI's `illicit`: advice or instruction on committing illicit acts.
  dangerous_and_criminal_content: "illicit",
};

/** OpenAI's model names (the route's default `text-moderation-latest` among them) mean Mistral's current model. */
const OPENAI_MODEL = /^(text|omni)-moderation-/;
export const MISTRAL_MODERATION_MODEL = "mistral-moderation-latest";

export function toMistralModerationRequest(body: Record<string, any>): { model: string; input: string | string[] } {
  const model =
    typeof body.model === "string" && !OPENAI_MODEL.test(body.model) ? body.model : MISTRAL_MODERATION_MODEL;
  return { model, input: textInput(body.input) };
}

/** Mistral moderates text: OpenAI's multimodal parts become their texts, and an image part is refused. */
function textInput(input: unknown): string | string[] {
  if (typeof input === "string") return input;
  if (!Array.isArray(input))
    throw new UpstreamError(400, "input must be a string or a list of strings", { param: "input" });
  return input.map((item) => {
    if (typeof item === "string") return item;
    if (item?.type === "text" && typeof item.text === "string") return item.text;
    throw new UpstreamError(400, "Mistral's moderation model reads text only: image_url parts are not supported.", {
      param: "input",
      code: "unsupported_input",
    });
  });
}

interface MistralResult {
  categories?: Record<string, unknown>;
  category_scores?: Record<string, unknown>;
}

export function fromMistralModerationResponse(upstream: any): Record<string, unknown> {
  const results: MistralResult[] = Array.isArray(upstream?.results) ? upstream.results : [];
  return {
    id: typeof upstream?.id === "string" ? upstream.id : "",
    model: typeof upstream?.model === "string" ? upstream.model : MISTRAL_MODERATION_MODEL,
    results: results.map(toOpenAIResult),
    // Token usage, when Mistral reports it, is what its moderation model is billed by (else the gateway counts).
    ...(upstream?.usage && typeof upstream.usage === "object" ? { usage: upstream.usage } : {}),
  };
}

function toOpenAIResult(result: MistralResult): Record<string, unknown> {
  const flags = result.categories ?? {};
  const scores = result.category_scores ?? {};
  const categories: Record<string, boolean> = {};
  const categoryScores: Record<string, number> = {};
  const appliedTypes: Record<string, string[]> = {};
  for (const name of OPENAI_MODERATION_CATEGORIES) {
    categories[name] = false;
    categoryScores[name] = 0;
    appliedTypes[name] = [];
  }
  for (const [mistralName, name] of Object.entries(COUNTERPARTS)) {
    categories[name] = flags[mistralName] === true;
    categoryScores[name] = numberOr0(scores[mistralName]);
    if (mistralName in flags || mistralName in scores) appliedTypes[name] = ["text"];
  }
  return {
    // Mistral judges content against all its categories (PII, financial, health and law advice included).
    flagged: Object.values(flags).some((flag) => flag === true),
    categories,
    category_scores: categoryScores,
    category_applied_input_types: appliedTypes,
    mistral: {
      categories: Object.fromEntries(Object.entries(flags).map(([name, flag]) => [name, flag === true])),
      category_scores: Object.fromEntries(Object.entries(scores).map(([name, score]) => [name, numberOr0(score)])),
    },
  };
}

function numberOr0(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
