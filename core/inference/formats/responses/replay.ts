import type { TypedEvent } from "../../../providers/types.ts";
import { functionCallItem, messageItem, outputTextPart, refusalPart, summaryPart } from "./response.ts";

/**
 * The stream events that spell a complete Response (a cached answer replayed as a stream): the sequence stream.ts
 * sends live, texts and arguments in pieces of at most PIECE_CHARS characters. Output items of kinds the
 * translation never makes (hosted tool calls of a native answer) are replayed as an added and a done event.
 */

type Json = Record<string, any>;

/** Characters per replayed delta: a long answer arrives in pieces, as a live one does. */
export const PIECE_CHARS = 1024;

export function replayResponse(answer: Record<string, any>): TypedEvent[] {
  const events: TypedEvent[] = [];
  const emit = (type: string, fields: Json) => events.push({ type, ...fields, sequence_number: events.length });
  const output: Json[] = Array.isArray(answer.output) ? answer.output : [];
  const started = {
    ...answer,
    status: "in_progress",
    error: null,
    incomplete_details: null,
    output: [],
    output_text: "",
    usage: null,
  };
  emit("response.created", { response: started });
  emit("response.in_progress", { response: started });
  output.forEach((item, outputIndex) => {
    if (item === null || typeof item !== "object") return;
    if (item.type === "message") replayMessage(emit, item, outputIndex);
    else if (item.type === "function_call") replayFunctionCall(emit, item, outputIndex);
    else if (item.type === "reasoning") replayReasoning(emit, item, outputIndex);
    else {
      emit("response.output_item.added", { output_index: outputIndex, item: { ...item, status: "in_progress" } });
      emit("response.output_item.done", { output_index: outputIndex, item });
    }
  });
  emit(terminalEventOf(answer.status), { response: answer });
  return events;
}

type Emit = (type: string, fields: Json) => void;

/** The terminal event type of a Response in `status`. */
export function terminalEventOf(status: unknown): string {
  if (status === "incomplete") return "response.incomplete";
  if (status === "failed" || status === "cancelled") return "response.failed";
  return "response.completed";
}

function replayMessage(emit: Emit, item: Json, outputIndex: number): void {
  emit("response.output_item.added", {
    output_index: outputIndex,
    item: messageItem(item.id, [], "in_progress"),
  });
  const content: Json[] = Array.isArray(item.content) ? item.content : [];
  content.forEach((part, contentIndex) => {
    const where = { item_id: item.id, output_index: outputIndex, content_index: contentIndex };
    if (part?.type === "output_text") {
      emit("response.content_part.added", { ...where, part: outputTextPart("") });
      const logprobs: Json[] = Array.isArray(part.logprobs) ? part.logprobs : [];
      // Logprobs go with the first piece (they are per token, and the pieces are not cut on token boundaries).
      pieces(part.text).forEach((delta, index) => {
        emit("response.output_text.delta", { ...where, delta, logprobs: index === 0 ? logprobs : [] });
      });
      emit("response.output_text.done", { ...where, text: part.text ?? "", logprobs });
    } else if (part?.type === "refusal") {
      emit("response.content_part.added", { ...where, part: refusalPart("") });
      for (const delta of pieces(part.refusal)) emit("response.refusal.delta", { ...where, delta });
      emit("response.refusal.done", { ...where, refusal: part.refusal ?? "" });
    } else {
      emit("response.content_part.added", { ...where, part });
    }
    emit("response.content_part.done", { ...where, part });
  });
  emit("response.output_item.done", { output_index: outputIndex, item });
}

function replayFunctionCall(emit: Emit, item: Json, outputIndex: number): void {
  const call = { callId: item.call_id, name: item.name, arguments: "" };
  emit("response.output_item.added", {
    output_index: outputIndex,
    item: functionCallItem(item.id, call, "in_progress"),
  });
  const where = { item_id: item.id, output_index: outputIndex };
  for (const delta of pieces(item.arguments)) emit("response.function_call_arguments.delta", { ...where, delta });
  emit("response.function_call_arguments.done", { ...where, name: item.name ?? "", arguments: item.arguments ?? "" });
  emit("response.output_item.done", { output_index: outputIndex, item });
}

function replayReasoning(emit: Emit, item: Json, outputIndex: number): void {
  emit("response.output_item.added", { output_index: outputIndex, item: { ...item, summary: [] } });
  const summary: Json[] = Array.isArray(item.summary) ? item.summary : [];
  summary.forEach((part, summaryIndex) => {
    const where = { item_id: item.id, output_index: outputIndex, summary_index: summaryIndex };
    emit("response.reasoning_summary_part.added", { ...where, part: summaryPart("") });
    for (const delta of pieces(part?.text)) emit("response.reasoning_summary_text.delta", { ...where, delta });
    emit("response.reasoning_summary_text.done", { ...where, text: part?.text ?? "" });
    emit("response.reasoning_summary_part.done", { ...where, part });
  });
  emit("response.output_item.done", { output_index: outputIndex, item });
}

/** A text in pieces of at most PIECE_CHARS (never splitting a surrogate pair); none for an empty text. */
function pieces(text: unknown): string[] {
  if (typeof text !== "string" || text === "") return [];
  const found: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + PIECE_CHARS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    found.push(text.slice(start, end));
    start = end;
  }
  return found;
}
