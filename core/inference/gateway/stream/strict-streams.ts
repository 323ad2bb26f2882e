import { errorChunkFailure } from "../../../providers/stream/openai-chunks.ts";
import { SseDecoder } from "../../../providers/stream/sse.ts";
import { type TypedEvent, UpstreamError } from "../../../providers/types.ts";

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
 * A relayed stream of OpenAI chunks (sse-relay.ts), read event by event: each chunk is parsed once and sent as
 * `data: <its JSON text>` (the text as the provider wrote it), an error chunk or one that is not a JSON object
 * fails the stream, and `[DONE]` is sent only once a choice finished: a stream that ends without a finish reason
 * was cut, whether or not the provider closed it cleanly.
 */
export class RelayedChunkCheck {
  readonly #decoder = new SseDecoder();
  #finished = false;

  /** Adds the events of one relayed piece to `pending`, up to the first one that breaks the stream (throws then). */
  pass(piece: Uint8Array, pending: Array<string | Uint8Array>): void {
    for (const event of this.#decoder.push(piece)) {
      if (event.data === "[DONE]") continue;
      const chunk = jsonObject(event.data);
      if (!chunk) throw notJson();
      const failure = errorChunkFailure(chunk);
      if (failure) throw failure;
      if (!this.#finished && Array.isArray(chunk.choices)) {
        for (const choice of chunk.choices) if (typeof choice?.finish_reason === "string") this.#finished = true;
      }
      pending.push(`data: ${event.data}\n\n`);
    }
  }

  end(pending: Array<string | Uint8Array>): void {
    if (!this.#finished) throw streamCut();
    pending.push(DONE);
  }
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

  pass(event: TypedEvent): void {
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

function brokenEvent(event: TypedEvent): UpstreamError {
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
