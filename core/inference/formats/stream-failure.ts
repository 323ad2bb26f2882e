import { type ErrorShape, vendorErrorBody } from "../../http/error-shapes.ts";
import type { RouteKind } from "../../providers/types.ts";
import type { UpstreamError } from "../../providers/types.ts";

/** The shape of a route's errors: the vendor's whose API the route speaks (core/http/error-shapes.ts). */
export function errorShapeOf(route: RouteKind | "passthrough"): ErrorShape {
  if (route === "messages") return "anthropic";
  if (route === "gemini") return "gemini";
  return "openai";
}

/**
 * The last event of a stream that failed after its first byte (the status is already sent), in the stream's own
 * format: OpenAI chunk streams end with `data: {"error": ...}`, Responses streams with an `error` event
 * (`{type, code, message, param}`), Anthropic streams with `event: error` (`{type: "error", error: {type, message}}`),
 * Gemini streams with `data: {"error": {code, message, status}}` (the @google/genai SDK raises it when `code` is
 * an HTTP error status).
 */
export function streamFailureEvent(route: RouteKind, failure: UpstreamError): string {
  if (route === "responses") {
    const event = { type: "error", code: failure.code ?? failure.type, message: failure.message, param: failure.param };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  }
  const shape = errorShapeOf(route);
  if (shape === "anthropic") return `event: error\ndata: ${JSON.stringify(vendorErrorBody(shape, failure))}\n\n`;
  if (shape === "gemini") return `data: ${JSON.stringify(vendorErrorBody(shape, failure))}\n\n`;
  const event = { error: { message: failure.message, type: failure.type, param: failure.param, code: failure.code } };
  return `data: ${JSON.stringify(event)}\n\n`;
}
