import { UpstreamError } from "../types.ts";

/**
 * Anthropic error bodies are `{type: "error", error: {type, message}}`. A non-2xx answer keeps its HTTP status
 * (the generic mapper in ../errors.ts reads this shape); an error that arrives inside a 2xx body or as a stream
 * `error` event has no status of its own, so one is derived from the error type.
 */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  // Anthropic answers 529 for overload; clients and retry layers understand 503 (temporarily unavailable).
  overloaded_error: 503,
};

export function anthropicErrorStatus(type: string | undefined): number {
  return (type && STATUS_BY_TYPE[type]) || 500;
}

/** True for an Anthropic error object (`{type: "error", ...}`). */
export function isAnthropicError(
  body: unknown,
): body is { type: "error"; error?: { type?: string; message?: string } } {
  return typeof body === "object" && body !== null && (body as { type?: unknown }).type === "error";
}

/** UpstreamError for an error body found in a 2xx answer or a stream `error` event. */
export function anthropicUpstreamError(
  body: { error?: { type?: string; message?: string } } | undefined,
): UpstreamError {
  const type = typeof body?.error?.type === "string" ? body.error.type : "api_error";
  const message = typeof body?.error?.message === "string" && body.error.message ? body.error.message : type;
  return new UpstreamError(anthropicErrorStatus(type), message, { type, code: type });
}
