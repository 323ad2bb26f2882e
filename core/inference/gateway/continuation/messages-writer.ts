import { messagesUsage, stopOf } from "../../formats/messages/from-chat.ts";
import { typedEventSse } from "../../formats/format-events.ts";
import type { ContinuationEnd, ContinuationWriter } from "./writer.ts";

type Json = Record<string, any>;

/**
 * A continued Messages stream: the continuation's text goes on as `text_delta`s of the text block the broken
 * stream had open (the same index), or of a new text block after the last one; the end stops the block, gives
 * the stop reason and every leg's output tokens in `message_delta`, and `message_stop` carries
 * `gateway_continuation`.
 */
export class MessagesContinuationWriter implements ContinuationWriter {
  readonly #message: Json;
  readonly #content: Json[];
  /** The client's request (its stop sequences name a `stop_sequence` stop). */
  readonly #body: Json;
  #index: number | undefined;
  /** A block other than text left open by the break (thinking): stopped before the continuation's text block. */
  #pendingStop: number | undefined;
  #final: Json | undefined;

  /** `partial`: the Message the broken stream spelled so far; `openBlock`: the block it had not stopped. */
  constructor(partial: Json, openBlock: number | undefined, body: Json) {
    this.#message = partial;
    this.#content = Array.isArray(partial.content) ? partial.content.map((block: Json) => ({ ...block })) : [];
    this.#body = body;
    if (openBlock !== undefined && this.#content[openBlock]?.type === "text") this.#index = openBlock;
    else this.#pendingStop = openBlock;
  }

  text(delta: string): string {
    const sse = this.#index === undefined ? this.#openBlock() : "";
    const block = this.#content[this.#index!]!;
    block.text = (typeof block.text === "string" ? block.text : "") + delta;
    return (
      sse +
      typedEventSse({ type: "content_block_delta", index: this.#index, delta: { type: "text_delta", text: delta } })
    );
  }

  finish(end: ContinuationEnd): string {
    let sse = this.#index === undefined ? this.#openBlock() : "";
    sse += typedEventSse({ type: "content_block_stop", index: this.#index });
    const stop = stopOf(end.finishReason, false, undefined, this.#body);
    const usage = messagesUsage(end.usage);
    sse += typedEventSse({ type: "message_delta", delta: stop, usage });
    this.#final = { ...this.#message, content: this.#content, ...stop, usage };
    return sse + typedEventSse({ type: "message_stop", gateway_continuation: end.note });
  }

  answer(): Json {
    return this.#final ?? { ...this.#message, content: this.#content };
  }

  #openBlock(): string {
    let sse = "";
    if (this.#pendingStop !== undefined) {
      sse += typedEventSse({ type: "content_block_stop", index: this.#pendingStop });
      this.#pendingStop = undefined;
    }
    this.#index = this.#content.length;
    this.#content.push({ type: "text", text: "" });
    return (
      sse +
      typedEventSse({ type: "content_block_start", index: this.#index, content_block: { type: "text", text: "" } })
    );
  }
}
