import type { TransformContext, TypedEvent } from "../../../providers/types.ts";
import type { ChatStreamConverter } from "../types.ts";
import { fallbackCallId, type OutputItemPrefix, outputItemId } from "./ids.ts";
import {
  buildResponse,
  functionCallItem,
  logprobsFromChat,
  messageItem,
  outcomeOfFinish,
  outputTextPart,
  reasoningItem,
  refusalPart,
  startedResponse,
  summaryPart,
} from "./response.ts";
import { responsesUsageFromChat } from "./usage.ts";

/**
 * Chat completion chunks -> the Responses stream events OpenAI sends for the same answer:
 *
 *   response.created, response.in_progress,
 *   per output item: response.output_item.added, its content events, response.output_item.done,
 *   response.completed | response.incomplete | response.failed (carrying the whole Response).
 *
 * Items open as their first delta arrives, in the order from-chat.ts gives them (reasoning, message, function
 * calls), with the same ids, so the final Response equals the JSON translation of the same answer. Reasoning and
 * message items close when the next item opens (chat sends them in that order); function calls stay open until
 * the finish reason, because chat may interleave the argument deltas of parallel calls. A delta of a kind whose item
 * was already closed (reasoning after text: interleaved thinking) opens a new item of that kind; the JSON answer of
 * such a stream joins them into one, so only there do the two differ. The terminal event waits for the usage chunk
 * (`choices: []`, asked for by to-chat.ts) or the end of the stream.
 */

type Json = Record<string, any>;

interface ReasoningState {
  kind: "reasoning";
  id: string;
  outputIndex: number;
  text: string;
  final?: Json;
}

type MessagePart = { type: "output_text"; text: string; logprobs: Json[] } | { type: "refusal"; refusal: string };

interface MessageState {
  kind: "message";
  id: string;
  outputIndex: number;
  parts: MessagePart[];
  textPart?: number;
  refusalPart?: number;
  final?: Json;
}

interface CallState {
  kind: "function_call";
  id: string;
  outputIndex: number;
  callId: string;
  name: string;
  arguments: string;
  final?: Json;
}

type ItemState = ReasoningState | MessageState | CallState;

const CUT_MESSAGE = "The provider's stream ended before the answer was complete.";

export function streamFromChat(body: Json, ctx: TransformContext): ChatStreamConverter<TypedEvent> {
  return new ResponsesStreamConverter(body, ctx);
}

export class ResponsesStreamConverter implements ChatStreamConverter<TypedEvent> {
  readonly #body: Json;
  readonly #ctx: TransformContext;
  #sequence = 0;
  #started = false;
  #terminated = false;
  readonly #items: ItemState[] = [];
  #reasoning?: ReasoningState;
  #message?: MessageState;
  /** Open function calls by their chat tool-call index. */
  readonly #calls = new Map<number, CallState>();
  readonly #ordinals: Record<OutputItemPrefix, number> = { rs: 0, msg: 0, fc: 0 };
  /** The chat finish reason, once given (undefined: not yet). */
  #finishReason?: string;
  #usage?: Json;
  #model?: string;
  #serviceTier?: string;

  constructor(body: Json, ctx: TransformContext) {
    this.#body = body;
    this.#ctx = ctx;
  }

  push(chunk: Record<string, any>): TypedEvent[] {
    if (this.#terminated || chunk === null || typeof chunk !== "object") return [];
    const events: TypedEvent[] = [];
    this.#start(events);
    if (!this.#model && typeof chunk.model === "string" && chunk.model) this.#model = chunk.model;
    if (typeof chunk.service_tier === "string") this.#serviceTier = chunk.service_tier;
    const carriesUsage = chunk.usage !== null && typeof chunk.usage === "object";
    if (carriesUsage) this.#usage = chunk.usage;
    const choices: Json[] = Array.isArray(chunk.choices) ? chunk.choices : [];
    const choice = choices.find((entry) => entry && (entry.index ?? 0) === 0);
    if (choice && this.#finishReason === undefined) {
      const delta: Json = choice.delta && typeof choice.delta === "object" ? choice.delta : {};
      const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
      if (typeof reasoning === "string" && reasoning !== "") this.#reasoningDelta(events, reasoning);
      if (typeof delta.content === "string" && delta.content !== "") {
        this.#textDelta(events, delta.content, logprobsFromChat(choice.logprobs?.content));
      }
      if (typeof delta.refusal === "string" && delta.refusal !== "") this.#refusalDelta(events, delta.refusal);
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) this.#toolCallDelta(events, call);
      if (typeof choice.finish_reason === "string") {
        this.#finishReason = choice.finish_reason;
        const { status } = outcomeOfFinish(choice.finish_reason);
        this.#closeAll(events, status === "incomplete" ? "incomplete" : "completed", true);
      }
    }
    // Usage given with or after the finish reason is the answer's total (some providers also send running counts
    // before it: those wait for a later one, or for the end).
    if (this.#finishReason !== undefined && carriesUsage) this.#terminate(events);
    return events;
  }

  end(): TypedEvent[] {
    if (this.#terminated) return [];
    const events: TypedEvent[] = [];
    this.#start(events);
    // No finish reason: the stream was cut (or failed upstream). What was open is closed as incomplete.
    if (this.#finishReason === undefined) this.#closeAll(events, "incomplete", false);
    this.#terminate(events);
    return events;
  }

  #emit(events: TypedEvent[], type: string, fields: Json): void {
    events.push({ type, ...fields, sequence_number: this.#sequence++ });
  }

  #start(events: TypedEvent[]): void {
    if (this.#started) return;
    this.#started = true;
    const response = startedResponse(this.#body, this.#ctx);
    this.#emit(events, "response.created", { response });
    this.#emit(events, "response.in_progress", { response });
  }

  #nextId(prefix: OutputItemPrefix): string {
    return outputItemId(this.#ctx.requestId, prefix, this.#ordinals[prefix]++);
  }

  /** A new item opens: the reasoning or message item before it is finished (chat does not go back to them). */
  #closeSequential(events: TypedEvent[]): void {
    if (this.#reasoning) this.#closeReasoning(events);
    if (this.#message) this.#closeMessage(events, "completed");
  }

  #reasoningDelta(events: TypedEvent[], delta: string): void {
    let item = this.#reasoning;
    if (!item) {
      this.#closeSequential(events);
      item = { kind: "reasoning", id: this.#nextId("rs"), outputIndex: this.#items.length, text: "" };
      this.#items.push(item);
      this.#reasoning = item;
      this.#emit(events, "response.output_item.added", {
        output_index: item.outputIndex,
        item: { id: item.id, type: "reasoning", summary: [] },
      });
      this.#emit(events, "response.reasoning_summary_part.added", {
        item_id: item.id,
        output_index: item.outputIndex,
        summary_index: 0,
        part: summaryPart(""),
      });
    }
    item.text += delta;
    this.#emit(events, "response.reasoning_summary_text.delta", {
      item_id: item.id,
      output_index: item.outputIndex,
      summary_index: 0,
      delta,
    });
  }

  #closeReasoning(events: TypedEvent[]): void {
    const item = this.#reasoning!;
    this.#reasoning = undefined;
    const where = { item_id: item.id, output_index: item.outputIndex, summary_index: 0 };
    this.#emit(events, "response.reasoning_summary_text.done", { ...where, text: item.text });
    this.#emit(events, "response.reasoning_summary_part.done", { ...where, part: summaryPart(item.text) });
    item.final = reasoningItem(item.id, item.text);
    this.#emit(events, "response.output_item.done", { output_index: item.outputIndex, item: item.final });
  }

  #openMessage(events: TypedEvent[]): MessageState {
    if (this.#message) return this.#message;
    this.#closeSequential(events);
    const item: MessageState = { kind: "message", id: this.#nextId("msg"), outputIndex: this.#items.length, parts: [] };
    this.#items.push(item);
    this.#message = item;
    this.#emit(events, "response.output_item.added", {
      output_index: item.outputIndex,
      item: messageItem(item.id, [], "in_progress"),
    });
    return item;
  }

  /** The open message's text part (opened first when needed). */
  #textPart(events: TypedEvent[]): { item: MessageState; part: Extract<MessagePart, { type: "output_text" }> } {
    const item = this.#openMessage(events);
    if (item.textPart === undefined) {
      item.textPart = item.parts.length;
      item.parts.push({ type: "output_text", text: "", logprobs: [] });
      this.#emit(events, "response.content_part.added", {
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: item.textPart,
        part: outputTextPart(""),
      });
    }
    return { item, part: item.parts[item.textPart] as Extract<MessagePart, { type: "output_text" }> };
  }

  #textDelta(events: TypedEvent[], delta: string, logprobs: Json[]): void {
    const { item, part } = this.#textPart(events);
    part.text += delta;
    part.logprobs.push(...logprobs);
    this.#emit(events, "response.output_text.delta", {
      item_id: item.id,
      output_index: item.outputIndex,
      content_index: item.textPart!,
      delta,
      logprobs,
    });
  }

  #refusalDelta(events: TypedEvent[], delta: string): void {
    const item = this.#openMessage(events);
    if (item.refusalPart === undefined) {
      item.refusalPart = item.parts.length;
      item.parts.push({ type: "refusal", refusal: "" });
      this.#emit(events, "response.content_part.added", {
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: item.refusalPart,
        part: refusalPart(""),
      });
    }
    const part = item.parts[item.refusalPart] as Extract<MessagePart, { type: "refusal" }>;
    part.refusal += delta;
    this.#emit(events, "response.refusal.delta", {
      item_id: item.id,
      output_index: item.outputIndex,
      content_index: item.refusalPart,
      delta,
    });
  }

  #closeMessage(events: TypedEvent[], status: string): void {
    const item = this.#message!;
    this.#message = undefined;
    const content = item.parts.map((part, index) => {
      const where = { item_id: item.id, output_index: item.outputIndex, content_index: index };
      if (part.type === "output_text") {
        this.#emit(events, "response.output_text.done", { ...where, text: part.text, logprobs: part.logprobs });
        const done = outputTextPart(part.text, part.logprobs);
        this.#emit(events, "response.content_part.done", { ...where, part: done });
        return done;
      }
      this.#emit(events, "response.refusal.done", { ...where, refusal: part.refusal });
      const done = refusalPart(part.refusal);
      this.#emit(events, "response.content_part.done", { ...where, part: done });
      return done;
    });
    item.final = messageItem(item.id, content, status);
    this.#emit(events, "response.output_item.done", { output_index: item.outputIndex, item: item.final });
  }

  #toolCallDelta(events: TypedEvent[], call: Json): void {
    if (call === null || typeof call !== "object") return;
    const index = Number.isInteger(call.index) ? call.index : 0;
    const fn: Json = call.function && typeof call.function === "object" ? call.function : {};
    let item = this.#calls.get(index);
    if (!item) {
      this.#closeSequential(events);
      const ordinal = this.#ordinals.fc;
      item = {
        kind: "function_call",
        id: this.#nextId("fc"),
        outputIndex: this.#items.length,
        callId: typeof call.id === "string" && call.id !== "" ? call.id : fallbackCallId(this.#ctx.requestId, ordinal),
        name: typeof fn.name === "string" ? fn.name : "",
        arguments: "",
      };
      this.#items.push(item);
      this.#calls.set(index, item);
      this.#emit(events, "response.output_item.added", {
        output_index: item.outputIndex,
        item: functionCallItem(item.id, { ...item, arguments: "" }, "in_progress"),
      });
    } else if (typeof fn.name === "string") {
      // A name given in pieces (most providers send it whole, in the first delta).
      item.name += fn.name;
    }
    if (typeof fn.arguments === "string" && fn.arguments !== "") {
      item.arguments += fn.arguments;
      this.#emit(events, "response.function_call_arguments.delta", {
        item_id: item.id,
        output_index: item.outputIndex,
        delta: fn.arguments,
      });
    }
  }

  #closeCall(events: TypedEvent[], item: CallState, status: string): void {
    this.#emit(events, "response.function_call_arguments.done", {
      item_id: item.id,
      output_index: item.outputIndex,
      name: item.name,
      arguments: item.arguments,
    });
    item.final = functionCallItem(item.id, item, status);
    this.#emit(events, "response.output_item.done", { output_index: item.outputIndex, item: item.final });
  }

  /**
   * Closes every open item with `status`. A finished answer that opened no item at all is an empty text (as
   * from-chat.ts gives it): its message is opened and closed here.
   */
  #closeAll(events: TypedEvent[], status: string, finished: boolean): void {
    if (finished && this.#items.length === 0) this.#textPart(events);
    if (this.#reasoning) this.#closeReasoning(events);
    if (this.#message) this.#closeMessage(events, status);
    const open = [...this.#calls.values()].sort((a, b) => a.outputIndex - b.outputIndex);
    this.#calls.clear();
    for (const item of open) this.#closeCall(events, item, status);
  }

  #terminate(events: TypedEvent[]): void {
    this.#terminated = true;
    const finished = this.#finishReason !== undefined;
    const { status, incompleteReason } = finished
      ? outcomeOfFinish(this.#finishReason)
      : { status: "failed" as const, incompleteReason: undefined };
    const response = buildResponse(this.#body, this.#ctx, {
      status,
      incompleteReason,
      error: finished ? null : { code: "server_error", message: CUT_MESSAGE },
      output: this.#items.map((item) => item.final).filter((item): item is Json => item !== undefined),
      usage: responsesUsageFromChat(this.#usage as any),
      model: this.#model ?? this.#ctx.model,
      serviceTier: this.#serviceTier,
    });
    const type =
      status === "completed"
        ? "response.completed"
        : status === "incomplete"
          ? "response.incomplete"
          : "response.failed";
    this.#emit(events, type, { response });
  }
}
