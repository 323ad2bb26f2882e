import { errorChunkFailure } from "../../../providers/stream/openai-chunks.ts";
import { SseDecoder } from "../../../providers/stream/sse.ts";
import { type TypedEvent, UpstreamError } from "../../../providers/types.ts";
import type { FormatEvent } from "../../formats/types.ts";

/**
 * The checks of a stream that the next target may continue (a fallback with `on_stream_failure: "continue"`).
 * Without them some breaks reach the client as they are: a relayed stream passes an error event or a chunk that
 * is not JSON as bytes, and an event-typed stream translated from chat closes its items and reports the failure
 * itself. With them, every break fails the stream (an UpstreamError) before anything of it is sent, which is what
 * the continuation takes over from. Only streams that may be continued run them.
 */

/** A stream that ended without its finish: the answer was cut short. */
export function streamCut(): UpstreamError {
  return new UpstreamError(502, "The provider's stream ended before the answer was finished.", {
    type: "server_error",
    code: "upstream_stream_cut",
  });
}

const DONE = "data: [DONE]\n\n";

/**
 * A relayed stream of OpenAI chunks (sse-relay.ts), read event by event: each chunk is parsed once and sent as the
 * provider's bytes, an error chunk or one that is not a JSON object fails the stream, and `[DONE]` is sent only
 * once a choice finished: a stream that ends without a finish reason was cut, whether or not the provider closed
 * it cleanly.
 */
export class RelayedChunkCheck {
  /** For pieces with CRs or multi-line data (rare): the general decoder. */
  #decoder: SseDecoder | undefined;
  #finished = false;

  /**
   * Adds the events of one relayed piece to `pending` (as the provider's bytes), up to the first one that breaks
   * the stream (throws then). A piece holds whole events (sse-relay.ts releases only those).
   */
  pass(piece: Uint8Array, pending: Array<string | Uint8Array>): void {
    const bytes = Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    if (this.#decoder || bytes.indexOf(CR) !== -1) {
      this.#passDecoded(bytes, pending);
      return;
    }
    for (let start = 0; start < bytes.length; ) {
      const blank = bytes.indexOf(LFLF, start);
      const end = blank === -1 ? bytes.length : blank + 2;
      const line = bytes.indexOf(LF, start);
      if (!startsWith(bytes, start, DATA_FIELD) || line < end - 2) {
        // Not the usual one-line `data:` event (a comment, several data lines): read by the general decoder.
        this.#decoder = new SseDecoder();
        this.#passDecoded(bytes.subarray(start), pending);
        return;
      }
      if (this.#check(bytes.toString("utf8", start + DATA_FIELD.length, end - 2)))
        pending.push(bytes.subarray(start, end));
      start = end;
    }
  }

  end(pending: Array<string | Uint8Array>): void {
    if (!this.#finished) throw streamCut();
    pending.push(DONE);
  }

  #passDecoded(bytes: Buffer, pending: Array<string | Uint8Array>): void {
    this.#decoder ??= new SseDecoder();
    for (const event of this.#decoder.push(bytes)) if (this.#check(event.data)) pending.push(`data: ${event.data}\n\n`);
  }

  /** Whether the event is a chunk to send (`[DONE]` is sent at the end); throws for one that breaks the stream. */
  #check(data: string): boolean {
    if (data === "[DONE]") return false;
    const chunk = jsonObject(data);
    if (!chunk) throw notJson();
    const failure = errorChunkFailure(chunk);
    if (failure) throw failure;
    if (!this.#finished && Array.isArray(chunk.choices)) {
      for (const choice of chunk.choices) if (typeof choice?.finish_reason === "string") this.#finished = true;
    }
    return true;
  }
}

const CR = 13;
const LF = 10;
const LFLF = Buffer.from("\n\n");
const DATA_FIELD = Buffer.from("data: ");

function startsWith(bytes: Buffer, at: number, prefix: Buffer): boolean {
  return bytes.length - at >= prefix.length && bytes.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}

/** Events that report the answer failed, and those that end a whole answer. */
const BREAKS = new Set(["error", "response.failed"]);
const ENDS = new Set(["response.completed", "response.incomplete", "message_stop"]);

/**
 * An event-typed stream (Responses, Messages): an `error` or `response.failed` event fails it, and it must end
 * with its terminal event. A stream translated from chat whose chat stream was cut closes its items and reports
 * the failure in its last events: those are judged before any is sent (`finishes`).
 */
export class TypedEventCheck {
  #ended = false;

  pass(event: FormatEvent): void {
    if (BREAKS.has(event.type)) throw brokenEvent(event);
    if (ENDS.has(event.type)) this.#ended = true;
  }

  /** Whether the stream finishes well with these last events (made when its upstream ended). */
  finishes(last: ReadonlyArray<object | string>): boolean {
    let ended = this.#ended;
    for (const out of last) {
      const type = (typeof out === "string" ? jsonObject(out)?.type : (out as TypedEvent).type) as unknown;
      if (typeof type !== "string" || BREAKS.has(type)) return false;
      if (ENDS.has(type)) ended = true;
    }
    return ended;
  }
}

function jsonObject(text: string): Record<string, any> | undefined {
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const notJson = () =>
  new UpstreamError(502, "The provider's stream holds a chunk that is not a JSON object.", {
    type: "server_error",
    code: "invalid_upstream_stream",
  });

function brokenEvent(event: FormatEvent): UpstreamError {
  const error = (event.error ?? (event.response as Record<string, any> | undefined)?.error ?? event) as Record<
    string,
    unknown
  >;
  const message = typeof error.message === "string" ? error.message : "The provider's stream reported an error.";
  return new UpstreamError(502, message, {
    type: "server_error",
    code: typeof error.code === "string" ? error.code : "upstream_stream_error",
  });
}
