import type { ChatUsage, TypedEvent } from "../../../providers/types.ts";
import { copyJson } from "../../../util/copy-json.ts";
import type { EventAssembler, StreamPosition } from "../types.ts";
import { outputTextOf } from "./response.ts";
import { chatUsageFromResponses } from "./usage.ts";

/**
 * Folds Responses stream events (translated ones, or a native provider's) into the Response they spell: the
 * terminal event's Response once seen (it is complete), else the Response of `response.created` with the output
 * items built from the events so far (a stream cut short still logs what it said). Whatever a provider sends, this
 * must not throw: it runs as the stream passes.
 */

type Json = Record<string, any>;

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);
const STARTED = new Set(["response.created", "response.in_progress", "response.queued"]);

/** Item indexes and content indexes are list positions: anything else (or a huge sparse index) is ignored. */
const MAX_INDEX = 4096;
const position = (value: unknown): number | undefined =>
  Number.isInteger(value) && (value as number) >= 0 && (value as number) < MAX_INDEX ? (value as number) : undefined;

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export class ResponsesEventAssembler implements EventAssembler<TypedEvent> {
  #started?: Json;
  #terminal?: Json;
  readonly #items: Json[] = [];
  #lastSequence: number | undefined;

  add(event: TypedEvent): void {
    if (!isRecord(event) || typeof event.type !== "string") return;
    if (typeof event.sequence_number === "number") this.#lastSequence = event.sequence_number;
    const type = event.type;
    if (TERMINAL.has(type)) {
      if (isRecord(event.response)) this.#terminal = event.response;
      return;
    }
    if (STARTED.has(type)) {
      if (isRecord(event.response)) this.#started = event.response;
      return;
    }
    const outputIndex = position(event.output_index);
    if (outputIndex === undefined) return;
    if (type === "response.output_item.added" || type === "response.output_item.done") {
      if (isRecord(event.item)) this.#items[outputIndex] = copyJson(event.item);
      return;
    }
    const item = this.#items[outputIndex];
    if (!item) return;
    switch (type) {
      case "response.content_part.added":
      case "response.content_part.done":
        this.#setIn(item, "content", event.content_index, event.part);
        return;
      case "response.output_text.delta":
        this.#appendIn(item, "content", event.content_index, "text", event.delta, event.logprobs);
        return;
      case "response.output_text.done":
        this.#assignIn(item, "content", event.content_index, "text", event.text);
        return;
      case "response.refusal.delta":
        this.#appendIn(item, "content", event.content_index, "refusal", event.delta);
        return;
      case "response.refusal.done":
        this.#assignIn(item, "content", event.content_index, "refusal", event.refusal);
        return;
      case "response.reasoning_summary_part.added":
      case "response.reasoning_summary_part.done":
        this.#setIn(item, "summary", event.summary_index, event.part);
        return;
      case "response.reasoning_summary_text.delta":
        this.#appendIn(item, "summary", event.summary_index, "text", event.delta);
        return;
      case "response.reasoning_summary_text.done":
        this.#assignIn(item, "summary", event.summary_index, "text", event.text);
        return;
      case "response.function_call_arguments.delta":
        if (typeof event.delta === "string") item.arguments = (item.arguments ?? "") + event.delta;
        return;
      case "response.function_call_arguments.done":
        if (typeof event.arguments === "string") item.arguments = event.arguments;
        return;
    }
  }

  result(): Record<string, any> {
    if (this.#terminal) return this.#terminal;
    if (!this.#started) return {};
    const output = this.#items.filter(isRecord);
    return { ...this.#started, output, output_text: outputTextOf(output) };
  }

  usage(): ChatUsage | undefined {
    return chatUsageFromResponses(this.#terminal?.usage);
  }

  model(): string | undefined {
    const model = this.#terminal?.model ?? this.#started?.model;
    return typeof model === "string" ? model : undefined;
  }

  position(): StreamPosition {
    return { lastSequence: this.#lastSequence };
  }

  /** Puts a part (a content part, a summary part) at its index in the item's list. */
  #setIn(item: Json, list: "content" | "summary", index: unknown, part: unknown): void {
    const at = position(index);
    if (at === undefined || !isRecord(part)) return;
    if (!Array.isArray(item[list])) item[list] = [];
    item[list][at] = copyJson(part);
  }

  #appendIn(
    item: Json,
    list: "content" | "summary",
    index: unknown,
    field: string,
    delta: unknown,
    logprobs?: unknown,
  ) {
    const part = this.#partAt(item, list, index);
    if (!part || typeof delta !== "string") return;
    part[field] = (typeof part[field] === "string" ? part[field] : "") + delta;
    if (Array.isArray(logprobs) && logprobs.length > 0) {
      part.logprobs = [...(Array.isArray(part.logprobs) ? part.logprobs : []), ...logprobs];
    }
  }

  #assignIn(item: Json, list: "content" | "summary", index: unknown, field: string, value: unknown): void {
    const part = this.#partAt(item, list, index);
    if (part && typeof value === "string") part[field] = value;
  }

  #partAt(item: Json, list: "content" | "summary", index: unknown): Json | undefined {
    const at = position(index);
    const parts = item[list];
    if (at === undefined || !Array.isArray(parts) || !isRecord(parts[at])) return undefined;
    return parts[at];
  }
}
