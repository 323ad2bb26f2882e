import type { FormatEvent, InboundFormat } from "./types.ts";

/**
 * The events that end an answer of a typed-event format: what an output guardrail holds back until it has judged
 * the whole answer. Responses: the terminal `response.*` events and `error`; Messages: `message_delta` (the stop
 * reason), `message_stop` and `error`. A format whose events are not typed (Gemini) says so itself
 * (InboundFormat.eventTail).
 */
const TERMINAL = new Set([
  "response.completed",
  "response.incomplete",
  "response.failed",
  "message_delta",
  "message_stop",
  "error",
]);

const FAILURES = new Set(["error", "response.failed"]);

/** Where an event sits in its format's answer: `end`, `error` (a failure, which ends it too) or undefined. */
export function eventTail(format: InboundFormat, event: FormatEvent): "end" | "error" | undefined {
  if (format.eventTail) return format.eventTail(event);
  if (typeof event?.type !== "string") return undefined;
  if (FAILURES.has(event.type)) return "error";
  return TERMINAL.has(event.type) ? "end" : undefined;
}

/** The SSE text of one event of a typed-event format: `event: <type>` + `data: <json>`. */
export function typedEventSse(event: FormatEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** One event of a format as written on the wire. */
export function formatEventText(format: InboundFormat, event: FormatEvent): string {
  return format.eventText ? format.eventText(event) : typedEventSse(event);
}
