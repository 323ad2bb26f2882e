import type { ArmedContinuation, ContinuationSetup } from "./setup.ts";
import type { BrokenLeg, StreamContinuation } from "./slot.ts";
import type { SseSource } from "../stream/sse-source.ts";

/**
 * The continuation a streamed request holds when its config has a fallback with `on_stream_failure: "continue"`
 * (made by the pipeline before the strategy runs, armed once it answered): cheap to hold, it loads the code that
 * continues a stream (continue-stream.ts) only when one breaks.
 */

export class ContinuationOffer implements StreamContinuation {
  readonly #setup: ContinuationSetup;
  #armed: ArmedContinuation | undefined;

  constructor(setup: ContinuationSetup) {
    this.#setup = setup;
  }

  /** The answering target had fallback targets after it (RoutingSuccess.rest): a break can be continued. */
  arm(armed: ArmedContinuation): void {
    this.#armed = armed;
  }

  async resume(broken: BrokenLeg): Promise<SseSource | undefined> {
    const armed = this.#armed;
    this.#armed = undefined;
    if (!armed) return undefined;
    const { continueStream } = await import("./continue-stream.ts");
    return continueStream(broken, this.#setup, armed);
  }
}
