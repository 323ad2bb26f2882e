import type { TypedEvent } from "../../../providers/types.ts";

/**
 * The two schemas a Response is presented in (spec 9). The gateway builds and stores Responses in the shape of
 * OpenAI's current Response object; a client that opts into the beta `use-responses-api-2026-07-30`
 * (`x-gateway-beta`, comma-separated betas allowed) gets that shape as it is. Every other client gets the default
 * schema: spec 2.1's reading of the same object (its four statuses, `reasoning` with `generate_summary`, usage
 * with spec 2.2's fields), every other field kept, so that the object still validates against OpenAI's
 * published Response schema (which the SDKs and agent frameworks parse it with).
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

const CANCELLED_MESSAGE = "The response was cancelled before it completed.";

export function presentResponse(response: Record<string, any>, schema: ResponseSchema): Record<string, any> {
  const presented: Json = presentCurrent(response);
  if (schema === "2026-07-30") return presented;
  const copy: Json = presented === response ? { ...response } : presented;
  if (response.status === "queued") copy.status = "in_progress";
  if (response.status === "cancelled") {
    copy.status = "failed";
    copy.error = { code: "cancelled", message: response.error?.message ?? CANCELLED_MESSAGE };
  }
  if ("reasoning" in copy) {
    const reasoning = copy.reasoning;
    copy.reasoning =
      reasoning && typeof reasoning === "object"
        ? { ...reasoning, effort: reasoning.effort ?? null, generate_summary: reasoning.summary ?? null }
        : null;
  }
  if (response.usage && typeof response.usage === "object") copy.usage = defaultUsage(response.usage);
  return copy;
}

/** Today's OpenAI shape: the stored Response, with `reasoning.summary` filled from a deprecated `generate_summary`. */
function presentCurrent(response: Json): Json {
  const reasoning = response.reasoning;
  if (!reasoning || typeof reasoning !== "object" || !("generate_summary" in reasoning)) return response;
  const { generate_summary, ...rest } = reasoning;
  return { ...response, reasoning: { ...rest, summary: rest.summary ?? generate_summary ?? null } };
}

/** Spec 2.2's five fields always there (and OpenAI's `cache_write_tokens`), whatever else the usage holds. */
function defaultUsage(usage: Json): Json {
  return {
    ...usage,
    input_tokens: usage.input_tokens ?? 0,
    input_tokens_details: {
      ...usage.input_tokens_details,
      cached_tokens: usage.input_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: usage.input_tokens_details?.cache_write_tokens ?? 0,
    },
    output_tokens: usage.output_tokens ?? 0,
    output_tokens_details: {
      ...usage.output_tokens_details,
      reasoning_tokens: usage.output_tokens_details?.reasoning_tokens ?? 0,
    },
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
