/**
 * The wire shapes an error answer can take. OpenAI's (core/http/errors.ts) is the gateway's own; a route that
 * speaks another vendor's API answers its errors as that vendor does, because its clients read only that shape:
 * - `anthropic` (POST /v1/messages): `{"type": "error", "error": {"type", "message"}}` with Anthropic's error
 *   types (the Anthropic SDK, Claude Code and LangChain raise their typed errors from `error.type`);
 * - `gemini` (POST /v1beta/models/...): Google's `{"error": {"code", "message", "status"}}`, `status` a
 *   google.rpc.Code name (the @google/genai SDK raises ApiError from `code`).
 * Streams that fail after their first byte end with the same objects as their last event
 * (core/inference/formats/stream-failure.ts).
 */

export type ErrorShape = "openai" | "anthropic" | "gemini";

/** What every shape is built from: the status, the OpenAI-style type and the message. */
export interface ErrorFacts {
  status: number;
  type: string;
  message: string;
}

/** Anthropic's documented error types (its API's "Errors" page). */
const ANTHROPIC_TYPES = new Set([
  "invalid_request_error",
  "authentication_error",
  "billing_error",
  "permission_error",
  "not_found_error",
  "request_too_large",
  "rate_limit_error",
  "api_error",
  "timeout_error",
  "overloaded_error",
]);

/**
 * Anthropic's error type for an error: its own type when it already is one of Anthropic's (an Anthropic
 * upstream's `overloaded_error` stays that, on whichever status), else the type its API gives that status.
 * `invalid_request_error` is also OpenAI's type for any 4xx, so it never hides a more precise status (413 is
 * `request_too_large`). Anthropic has no type for a refusal by the gateway's own rules (a guardrail's 446, a
 * conflict): those are requests it will not serve as sent, `invalid_request_error`.
 */
export function anthropicErrorType(status: number, type?: string): string {
  if (type && type !== "invalid_request_error" && ANTHROPIC_TYPES.has(type)) return type;
  if (status === 401) return "authentication_error";
  if (status === 402) return "billing_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 408 || status === 504) return "timeout_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 503 || status === 529) return "overloaded_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

/** The google.rpc.Code name Google's APIs answer with an HTTP status (AIP-193's mapping). */
export function geminiErrorStatus(status: number): string {
  switch (status) {
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 409:
      return "ABORTED";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 499:
      return "CANCELLED";
    case 501:
      return "UNIMPLEMENTED";
    case 503:
      return "UNAVAILABLE";
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT";
  }
}

/** The error object of an `anthropic` or `gemini` answer (the caller adds OpenAI's shape itself). */
export function vendorErrorBody(shape: Exclude<ErrorShape, "openai">, error: ErrorFacts): Record<string, unknown> {
  if (shape === "anthropic") {
    return { type: "error", error: { type: anthropicErrorType(error.status, error.type), message: error.message } };
  }
  // Google's `code` is the HTTP status; a stream's error event (sent under a 200) keeps the failure's own.
  return { error: { code: error.status, message: error.message, status: geminiErrorStatus(error.status) } };
}
