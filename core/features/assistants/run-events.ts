import { SseDecoder } from "../../providers/stream/sse.ts";
import type { UpstreamEvent } from "../../providers/types.ts";
import { isPlainObject } from "../../inference/routing/query.ts";
import { claimCreated } from "./answers.ts";
import { type CallScope, finishedRunOf, recordRunUsage } from "./run-usage.ts";

/** Events whose data is a new object the caller's workspace owns (OpenAI's assistant stream events reference). */
const CREATED_EVENTS = new Set(["thread.created", "thread.run.created", "thread.message.created"]);
/** Events whose data is a run in a terminal status, carrying its usage. */
const FINISHED_RUN_EVENTS = new Set([
  "thread.run.completed",
  "thread.run.failed",
  "thread.run.cancelled",
  "thread.run.expired",
  "thread.run.incomplete",
]);

/**
 * Watches a streamed run's server-sent events as they are relayed (the bytes go to the client unchanged): records
 * the thread, run and messages it creates, and counts the run's usage from its terminal event. Only those few
 * events are parsed; deltas pass by unread. `settled()` resolves once the work the events started is done.
 */
export class RunEventsObserver {
  readonly #decoder = new SseDecoder();
  readonly #scope: CallScope;
  readonly #work: Promise<void>[] = [];

  constructor(scope: CallScope) {
    this.#scope = scope;
  }

  push(chunk: Uint8Array): void {
    for (const event of this.#decoder.push(chunk)) this.#event(event);
  }

  async settled(): Promise<void> {
    try {
      for (const event of this.#decoder.end()) this.#event(event);
    } catch {
      // A stream cut mid-event: what arrived whole was seen.
    }
    await Promise.allSettled(this.#work);
  }

  #event(event: UpstreamEvent): void {
    const name = event.event;
    if (!name || !(CREATED_EVENTS.has(name) || FINISHED_RUN_EVENTS.has(name))) return;
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      return;
    }
    if (!isPlainObject(data)) return;
    if (CREATED_EVENTS.has(name)) {
      this.#work.push(claimCreated(data, this.#scope));
      return;
    }
    const run = finishedRunOf(data);
    if (run) this.#work.push(recordRunUsage(run, this.#scope));
  }
}
