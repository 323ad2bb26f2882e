import type { ChatUsage, TransformContext, TypedEvent } from "../../providers/types.ts";

/**
 * Inbound wire formats other than chat completions (DESIGN: adapters at the edge of the pipeline). A client may
 * speak OpenAI's Responses API (`/v1/responses`) or Anthropic's Messages API (`/v1/messages`) to any provider:
 * providers that speak the format natively get the body as it is (and the answer is parsed for usage); every
 * other provider is reached through its chat adapter, the body translated to chat completions and the answer
 * (JSON or stream) translated back (core/inference/formats/via-chat.ts composes that RouteAdapter).
 *
 * Each format is one folder (core/inference/formats/responses, core/inference/formats/messages) exporting an `InboundFormat`.
 */

/** Stateful per request: chat completion chunks (OpenAI `chat.completion.chunk` objects) -> the format's events. */
export interface ChatStreamConverter {
  push(chunk: Record<string, any>): TypedEvent[];
  /** The chat stream ended (also after an upstream error: close what is open, say how it ended). */
  end(): TypedEvent[];
}

/** Folds a format's stream events, as they pass, into the answer they spell (one object like a JSON answer). */
export interface EventAssembler {
  add(event: TypedEvent): void;
  /** The answer so far (complete once the stream ended with its terminal event). */
  result(): Record<string, any>;
  /** Usage reported so far, in chat shape (undefined until the events carried some). */
  usage(): ChatUsage | undefined;
  /** The model the answer names, once known. */
  model(): string | undefined;
}

/** Where one text sits in a JSON body, and the text (guardrails read and rewrite texts through these). */
export interface TextSlot {
  path: ReadonlyArray<string | number>;
  text: string;
}

/** The texts of a body and which of them are judged (checks see `parts`; `text` is the judged slice joined). */
export interface FoundTexts {
  slots: TextSlot[];
  /** The judged slots: [from, to). */
  judged: { from: number; to: number };
}

export interface InboundFormat {
  /** The route kind of the format (core/providers/types.ts RouteKind). */
  route: "responses" | "messages";
  /**
   * A validated body of this format -> a chat completions body for the same model. Streaming bodies ask for
   * usage (`stream_options.include_usage: true`) so the answer's usage can be reported. Throws a 400 HttpError
   * (core/http/errors.ts badRequest) for what chat cannot express.
   */
  toChat(body: Record<string, any>): Record<string, any>;
  /** A chat completion (OpenAI shape, as the chat adapter answers) -> this format's answer to `body`. */
  fromChat(completion: Record<string, any>, body: Record<string, any>, ctx: TransformContext): Record<string, any>;
  /** Chat chunks -> this format's events, for one request (`body` is the request in this format). */
  streamFromChat(body: Record<string, any>, ctx: TransformContext): ChatStreamConverter;
  /** The events that spell a complete answer, in order (a cached answer replayed as a stream). */
  replay(answer: Record<string, any>): TypedEvent[];
  assembler(): EventAssembler;
  /** An answer's usage in chat shape (prompt_tokens = input incl. cached; completion = output). */
  usageOf(answer: Record<string, any>): ChatUsage | undefined;
  /** Whether an answer (JSON, or assembled from a stream) is complete and successful: only those are cached. */
  isComplete(answer: Record<string, any>): boolean;
  /** Guardrails: the texts of a request body (input) and of an answer (output) of this format. */
  inputTexts(body: Record<string, any>): FoundTexts;
  outputTexts(answer: Record<string, any>): FoundTexts;
  /**
   * Optional, per target, after toChat: fits the chat body to the target (e.g. Responses `truncation`: `disabled`
   * and over the model's context window -> UpstreamError 400 `context_length_exceeded`; `auto` drops the oldest
   * items). `ctx.target.provider` and `ctx.model` name the target.
   */
  prepare?(chat: Record<string, any>, body: Record<string, any>, ctx: TransformContext): Promise<Record<string, any>>;
}
