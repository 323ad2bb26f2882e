import type { RouteKind } from "../../providers/types.ts";
import type { UpstreamError } from "../../providers/types.ts";

/**
 * The last event of a stream that failed after its first byte (the status is already sent), in the stream's own
 * format: OpenAI chunk streams end with `data: {"error": ...}`, Responses streams with an `error` event
 * (`{type, code, message, param}`), Anthropic streams with `event: error` (`{type: "error", error: {type, message}}`).
 */
export function streamFailureEvent(route: RouteKind, failure: UpstreamError): string {
  if (route === "responses") {
    const event = { type: "error", code: failure.code ?? failure.type, message: failure.message, param: failure.param };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  }
  if (route === "messages") {
    const event = { type: "error", error: { type: anthropicErrorType(failure.status), message: failure.message } };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  }
  const event = { error: { message: failure.message, type: failure.type, param: failure.param, code: failure.code } };
  return `data: ${JSON.stringify(event)}\n\n`;
}

/** Anthropic's error types by status (its API's documented mapping). */
export function anthropicErrorType(status: number): string {
  if (status === 400) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  return "api_error";
}
