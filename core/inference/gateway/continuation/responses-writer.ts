import { randomBytes } from "node:crypto";
import { messageItem, outcomeOfFinish, outputTextOf, outputTextPart } from "../../formats/responses/response.ts";
import { responsesUsageFromChat } from "../../formats/responses/usage.ts";
import { typedEventSse } from "../../formats/format-events.ts";
import type { ContinuationEnd, ContinuationWriter } from "./writer.ts";

type Json = Record<string, any>;

interface OpenText {
  item: Json;
  outputIndex: number;
  contentIndex: number;
}

/**
 * A continued Responses stream: the continuation's text goes on as `response.output_text.delta` events of the
 * message item the broken stream was writing (the same item id, output and content index), or of a new message
 * item when none was open; sequence numbers go on from the last one sent. The end closes the text, the part and
 * the item, and `response.completed` (or `.incomplete`) carries the same response id with every leg's usage;
 * that last event carries `gateway_continuation`.
 */
export class ResponsesContinuationWriter implements ContinuationWriter {
  readonly #response: Json;
  readonly #output: Json[];
  #open: OpenText | undefined;
  #sequence: number;
  #final: Json | undefined;

  /** `partial`: the Response the broken stream spelled so far; `lastSequence`: the last sequence number sent. */
  constructor(partial: Json, lastSequence: number | undefined) {
    this.#response = partial;
    this.#output = Array.isArray(partial.output) ? partial.output.map((item: Json) => structuredClone(item)) : [];
    this.#sequence = (lastSequence ?? -1) + 1;
    this.#open = openText(this.#output);
  }

  text(delta: string): string {
    let sse = "";
    if (!this.#open) sse += this.#openMessage();
    const open = this.#open!;
    const part = open.item.content[open.contentIndex];
    part.text += delta;
    return `${sse}${this.#event("response.output_text.delta", {
      item_id: open.item.id,
      output_index: open.outputIndex,
      content_index: open.contentIndex,
      delta,
      logprobs: [],
    })}`;
  }

  finish(end: ContinuationEnd): string {
    let sse = this.#open ? "" : this.#openMessage();
    const { item, outputIndex, contentIndex } = this.#open!;
    const where = { item_id: item.id, output_index: outputIndex, content_index: contentIndex };
    const part = item.content[contentIndex];
    const { status, incompleteReason } = outcomeOfFinish(end.finishReason);
    sse += this.#event("response.output_text.done", { ...where, text: part.text, logprobs: part.logprobs ?? [] });
    sse += this.#event("response.content_part.done", { ...where, part });
    item.status = status === "incomplete" ? "incomplete" : "completed";
    sse += this.#event("response.output_item.done", { output_index: outputIndex, item });
    this.#final = {
      ...this.#response,
      status,
      error: null,
      incomplete_details: incompleteReason ? { reason: incompleteReason } : null,
      output: this.#output,
      output_text: outputTextOf(this.#output),
      usage: responsesUsageFromChat(end.usage),
    };
    const terminal = status === "completed" ? "response.completed" : "response.incomplete";
    return sse + this.#event(terminal, { response: this.#final, gateway_continuation: end.note });
  }

  answer(): Json {
    return this.#final ?? { ...this.#response, output: this.#output, output_text: outputTextOf(this.#output) };
  }

  /** No message was being written: the continuation's text opens one (its item and its text part). */
  #openMessage(): string {
    const outputIndex = this.#output.length;
    const item = messageItem(`msg_${randomBytes(24).toString("hex")}`, [], "in_progress");
    this.#output.push(item);
    let sse = this.#event("response.output_item.added", { output_index: outputIndex, item: structuredClone(item) });
    const part = outputTextPart("");
    item.content.push(part);
    sse += this.#event("response.content_part.added", {
      item_id: item.id,
      output_index: outputIndex,
      content_index: 0,
      part: structuredClone(part),
    });
    this.#open = { item, outputIndex, contentIndex: 0 };
    return sse;
  }

  #event(type: string, fields: Json): string {
    return typedEventSse({ type, ...fields, sequence_number: this.#sequence++ });
  }
}

/** The text part the broken stream was writing: the last item, a message still in progress, its last text part. */
function openText(output: Json[]): OpenText | undefined {
  const outputIndex = output.length - 1;
  const item = output[outputIndex];
  if (item?.type !== "message" || item.status !== "in_progress" || !Array.isArray(item.content)) return undefined;
  const contentIndex = item.content.length - 1;
  const part = item.content[contentIndex];
  if (part?.type !== "output_text") return undefined;
  if (typeof part.text !== "string") part.text = "";
  return { item, outputIndex, contentIndex };
}
