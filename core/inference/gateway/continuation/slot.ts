import type { StreamPosition } from "../../formats/types.ts";
import type { ChatUsage, UpstreamError } from "../../../providers/types.ts";
import type { StreamPiece } from "../stream/pipelines.ts";
import type { SseSource } from "../stream/sse-source.ts";

/**
 * The seam between a streamed answer (stream/sse-answer.ts) and the continuation of a fallback with
 * `on_stream_failure: "continue"` (continue-stream.ts): what the stream hands over when its provider breaks
 * after content reached the client. Types only, so the stream does not load the continuation until one is needed.
 */

/** A stream whose provider broke mid-answer, as the SSE answer hands it over. */
export interface BrokenLeg {
  failure: UpstreamError;
  /** What the pipeline made of the provider's last events but did not send yet: sent first. */
  unsent: StreamPiece[];
  /** The answer so far, as the pipeline folds it for the log (an object, or a value assembled on demand). */
  answer: unknown;
  /** The usage the provider reported before it broke, if any. */
  usage: ChatUsage | undefined;
  /** Where an event-typed stream stands (Responses sequence numbers, the open Messages block). */
  position: StreamPosition | undefined;
  /** Records this leg's usage and cost on the request's outcome (counting it from `answer` when none was reported). */
  recordUsage(reported: ChatUsage | undefined, answer: Record<string, any>): Promise<void>;
  /** Aborted when the client goes away while the next target is being asked. */
  signal: AbortSignal;
}

export interface StreamContinuation {
  /**
   * Takes the stream over: the source of everything the client is sent from here on (the unsent pieces first),
   * which also settles the request's outcome when it ends. Undefined when the answer cannot be continued (a tool
   * call was under way, no target is left or none answered): the stream then ends with its error as before.
   */
  resume(broken: BrokenLeg): Promise<SseSource | undefined>;
}
