import type { TypedEvent } from "../../../providers/types.ts";

/**
 * The two schemas a Response is presented in (spec 9). The gateway builds and stores Responses in the shape of
 * OpenAI's current Response object; a client that opts into the beta `use-responses-api-2026-07-30`
 * (`x-gateway-beta`, comma-separated betas allowed) gets that shape, every other client the default schema: the
 * fields of spec 2.1 exactly, its four statuses, `reasoning` as `{effort, generate_summary}`, usage as in 2.2.
 */

export const RESPONSES_BETA = "use-responses-api-2026-07-30";

export type ResponseSchema = "default" | "2026-07-30";

/** The schema a request asks for, from its `x-gateway-beta` header (null: absent). */
export function schemaOf(betaHeaderValue: string | null | undefined): ResponseSchema {
  if (!betaHeaderValue) return "default";
  const betas = betaHeaderValue.split(",").map((beta) => beta.trim().toLowerCase());
  return betas.includes(RESPONSES_BETA) ? "2026-07-30" : "default";
}

type Json = Record<string, any>;

/** The Response fields of spec 2.1, in its order. */
const DEFAULT_FIELDS = [
  "id",
  "object",
  "status",
  "created_at",
  "error",
  "incomplete_details",
  "output",
  "output_text",
  "usage",
  "parallel_tool_calls",
  "metadata",
  "temperature",
  "top_p",
  "user",
  "previous_response_id",
  "model",
  "reasoning",
  "max_output_tokens",
  "instructions",
  "text",
  "tools",
  "tool_choice",
  "truncation",
] as const;

const CANCELLED_MESSAGE = "The response was cancelled before it completed.";

export function presentResponse(response: Record<string, any>, schema: ResponseSchema): Record<string, any> {
  if (schema === "2026-07-30") return presentCurrent(response);
  const presented: Json = {};
  for (const field of DEFAULT_FIELDS) {
    if (field in response) presented[field] = response[field];
  }
  if (response.status === "queued") presented.status = "in_progress";
  if (response.status === "cancelled") {
    presented.status = "failed";
    presented.error = { code: "cancelled", message: response.error?.message ?? CANCELLED_MESSAGE };
  }
  if ("reasoning" in response) {
    const reasoning = response.reasoning;
    presented.reasoning =
      reasoning && typeof reasoning === "object"
        ? {
            effort: reasoning.effort ?? null,
            generate_summary: reasoning.summary ?? reasoning.generate_summary ?? null,
          }
        : null;
  }
  if (response.text && typeof response.text === "object") presented.text = { format: response.text.format };
  if (response.usage && typeof response.usage === "object") presented.usage = defaultUsage(response.usage);
  return presented;
}

/** Today's OpenAI shape: the stored Response, with `reasoning.summary` filled from a deprecated `generate_summary`. */
function presentCurrent(response: Json): Json {
  const reasoning = response.reasoning;
  if (!reasoning || typeof reasoning !== "object" || !("generate_summary" in reasoning)) return response;
  const { generate_summary, ...rest } = reasoning;
  return { ...response, reasoning: { ...rest, summary: rest.summary ?? generate_summary ?? null } };
}

/** Spec 2.2's five fields. */
function defaultUsage(usage: Json): Json {
  return {
    input_tokens: usage.input_tokens ?? 0,
    input_tokens_details: { cached_tokens: usage.input_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.output_tokens ?? 0,
    output_tokens_details: { reasoning_tokens: usage.output_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens ?? 0,
  };
}

/**
 * A stream event presented in `schema`: the Response that `response.*` lifecycle events carry (and, in the
 * default schema, which knows no `queued` status, `response.queued` as `response.in_progress`).
 */
export function presentEvent(event: TypedEvent, schema: ResponseSchema): TypedEvent {
  if (schema === "2026-07-30" || !event.response || typeof event.response !== "object") return event;
  const type = event.type === "response.queued" ? "response.in_progress" : event.type;
  return { ...event, type, response: presentResponse(event.response as Json, schema) };
}
