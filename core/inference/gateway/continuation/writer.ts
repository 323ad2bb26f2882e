import type { ChatUsage } from "../../../providers/types.ts";

/**
 * How a continued answer is written to the client in the stream it already reads: the continuation's text as
 * more of the same answer (its id, its item or block, its sequence numbers), then one end (one finish, one usage
 * for every leg, the note saying it was continued). One writer per inbound format: chat chunks
 * (chat-writer.ts), Responses events (responses-writer.ts), Messages events (messages-writer.ts).
 */
export interface ContinuationWriter {
  /** The SSE text for a piece of the continuation's text (already trimmed of what the client has). */
  text(delta: string): string;
  /** The SSE text that ends the answer. */
  finish(end: ContinuationEnd): string;
  /** The whole answer (the broken legs' text and the continuation) as the request log keeps it. */
  answer(): Record<string, any>;
}

export interface ContinuationEnd {
  /** The continuing target's chat finish reason. */
  finishReason: string;
  /** Every leg's usage, summed. */
  usage: ChatUsage;
  note: ContinuationNote;
}

/**
 * The documented `gateway_continuation` field of an answer's last chunk or event (docs/routing.md): the stream
 * broke and another target finished the answer. A header cannot say it: the body had started.
 */
export interface ContinuationNote {
  /** The code of the break (`upstream_stream_cut`, `timeout`, an error event's code...). */
  reason: string;
  /** The target whose stream broke (the first one, when several did). */
  from: { provider: string; target: string };
  /** The target that finished the answer. */
  by: { provider: string; target: string; model?: string };
}
