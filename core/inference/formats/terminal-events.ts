import type { TypedEvent } from "../../providers/types.ts";

/**
 * The events that end an answer of an event-typed format: what an output guardrail holds back until it has
 * judged the whole answer. Responses: the terminal `response.*` events and `error`; Messages: `message_delta`
 * (the stop reason), `message_stop` and `error`.
 */
const TERMINAL = new Set([
  "response.completed",
  "response.incomplete",
  "response.failed",
  "message_delta",
  "message_stop",
  "error",
]);

export function endsFormatAnswer(event: TypedEvent): boolean {
  return TERMINAL.has(event.type);
}
