import type { ContinuationEnd, ContinuationWriter } from "./writer.ts";

type Json = Record<string, any>;

/**
 * A continued chat completion stream: more `chat.completion.chunk`s of the same completion (its id, created,
 * model and choice 0), then the finish reason, the usage chunk when the client asked for one, and `[DONE]`; the
 * last chunk carries `gateway_continuation`.
 */
export class ChatContinuationWriter implements ContinuationWriter {
  readonly #head: Json;
  readonly #includeUsage: boolean;
  readonly #partial: Json;
  #text: string;
  #end: ContinuationEnd | undefined;

  /** `partial`: the broken stream's answer as its pipeline folded it (a chat completion). */
  constructor(partial: Json, includeUsage: boolean, partialText: string) {
    this.#partial = partial;
    this.#head = { id: partial.id, object: "chat.completion.chunk", created: partial.created, model: partial.model };
    if (partial.system_fingerprint) this.#head.system_fingerprint = partial.system_fingerprint;
    this.#includeUsage = includeUsage;
    this.#text = partialText;
  }

  text(delta: string): string {
    this.#text += delta;
    return this.#chunk([{ index: 0, delta: { content: delta }, logprobs: null, finish_reason: null }]);
  }

  finish(end: ContinuationEnd): string {
    this.#end = end;
    const note = { gateway_continuation: end.note };
    const finish = [{ index: 0, delta: {}, logprobs: null, finish_reason: end.finishReason }];
    if (!this.#includeUsage) return `${this.#chunk(finish, note)}data: [DONE]\n\n`;
    return `${this.#chunk(finish)}${this.#chunk([], { usage: end.usage, ...note })}data: [DONE]\n\n`;
  }

  answer(): Json {
    const choice = this.#partial.choices?.[0] ?? {};
    const message = { ...choice.message, role: "assistant", content: this.#text };
    const answer: Json = {
      ...this.#partial,
      choices: [{ ...choice, index: 0, message, finish_reason: this.#end?.finishReason ?? null }],
    };
    if (this.#end) {
      answer.usage = this.#end.usage;
      answer.gateway_continuation = this.#end.note;
    }
    return answer;
  }

  #chunk(choices: Json[], extra: Json = {}): string {
    return `data: ${JSON.stringify({ ...this.#head, choices, ...extra })}\n\n`;
  }
}
