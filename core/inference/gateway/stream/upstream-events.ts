import { Readable } from "node:stream";
import type { EventDecoder } from "../../../providers/stream/sse.ts";
import type { StreamFraming, UpstreamEvent } from "../../../providers/types.ts";
import { createDecoder } from "./framing.ts";
import { timeoutError } from "../../../providers/upstream/failures.ts";
import { withIdleTimeout } from "../../../providers/upstream/idle-timeout.ts";

/** How a stalled upstream stream ends: no batch for `idleMs` while the consumer waits for one. */
export interface IdleTimeout {
  idleMs: number;
  /** Called once when the timeout fires (callers abort the upstream request). */
  onTimeout: () => void;
}

/**
 * Turns network chunks into batches of something (events, bytes ready for the client): `push` returns what a
 * chunk completed, if anything; `end` what is left when the body ends (or throws for a body cut mid-frame).
 */
export interface BatchDecoder<T> {
  push(chunk: Uint8Array): T | undefined;
  end(): T | undefined;
}

/**
 * The event batches of a streamed upstream body, failing with a 408 when the provider goes silent. A Node
 * Readable (what undici gives) is read from its events by an UpstreamBatchReader; any other body (web streams,
 * test fixtures) goes through the generic async-iterator path, which behaves the same.
 */
export async function readUpstreamEvents(
  framing: StreamFraming,
  body: AsyncIterable<Uint8Array>,
  idle: IdleTimeout,
): Promise<AsyncIterator<UpstreamEvent[]>> {
  return readUpstreamBatches(body, eventBatchDecoder(await createDecoder(framing)), idle);
}

/** The batches `decoder` makes of a streamed upstream body, with the idle timeout of readUpstreamEvents. */
export function readUpstreamBatches<T>(
  body: AsyncIterable<Uint8Array>,
  decoder: BatchDecoder<T>,
  idle: IdleTimeout,
): AsyncIterator<T> {
  if (body instanceof Readable) return new UpstreamBatchReader(body, decoder, idle);
  return withIdleTimeout(decodedBatches(body, decoder), idle.idleMs, idle.onTimeout)[Symbol.asyncIterator]();
}

/** An event decoder as a batch decoder: a chunk that completed no event makes no batch. */
function eventBatchDecoder(decoder: EventDecoder): BatchDecoder<UpstreamEvent[]> {
  return {
    push(chunk) {
      const events = decoder.push(chunk);
      return events.length > 0 ? events : undefined;
    },
    end() {
      const events = decoder.end();
      return events.length > 0 ? events : undefined;
    },
  };
}

/** The generic path: one batch per chunk that completed one, then the decoder's last. */
async function* decodedBatches<T>(source: AsyncIterable<Uint8Array>, decoder: BatchDecoder<T>): AsyncIterable<T> {
  for await (const chunk of source) {
    const batch = decoder.push(chunk);
    if (batch !== undefined) yield batch;
  }
  const last = decoder.end();
  if (last !== undefined) yield last;
}

/**
 * Batches allowed to wait unread before the body is paused: a slow client must not make the gateway buffer a
 * fast upstream in memory (a paused body stops reading its socket once its own buffer is full).
 */
const MAX_QUEUED_BATCHES = 2;

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * Reads a Node Readable body through its 'data' / 'end' / 'error' / 'close' events: each chunk goes to the
 * decoder as it arrives and the batch of events it completed (if any) is queued for `next()`.
 *
 * This replaces three stacked async iterators (the Readable's own, `eventBatches` and `withIdleTimeout`),
 * which cost several promises, listeners and 'readable' round trips per network chunk, with one promise per
 * batch the consumer actually waits for. It behaves like that stack: one batch per chunk that completed
 * events and then the decoder's last events, the body's or decoder's error as a rejection after the batches
 * before it, a close before the end as a premature close, and an idle timeout counting only the time the
 * consumer waits. Reads are not re-entrant: one `next()` at a time (as the SSE answer does, sse-answer.ts).
 */
export class UpstreamBatchReader<T> implements AsyncIterableIterator<T> {
  readonly #body: Readable;
  readonly #decoder: BatchDecoder<T>;
  readonly #idle: IdleTimeout;
  /** Batches decoded but not yet handed out (only while nobody waits: a waiting read gets its batch directly). */
  readonly #queue: T[] = [];
  /** The body is paused by us because the queue is full. */
  #paused = false;
  /** No more input: the body ended, failed, timed out, or the consumer returned. */
  #stopped = false;
  /** Why the stream failed, handed out once after the queued batches. */
  #failure: { error: unknown } | undefined;
  /** The pending read's settlers, set only while the consumer waits. */
  #resolve: ((result: IteratorResult<T>) => void) | undefined;
  #reject: ((error: unknown) => void) | undefined;
  /** One timer for the whole stream, re-armed when a wait starts and left to lapse while nobody waits. */
  #idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(body: Readable, decoder: BatchDecoder<T>, idle: IdleTimeout) {
    this.#body = body;
    this.#decoder = decoder;
    this.#idle = idle;
    // An already finished body sends none of these events again.
    if (body.errored) this.#fail(body.errored);
    else if (body.readableEnded) this.#onEnd();
    else if (body.destroyed) this.#fail(prematureClose());
    else this.#listen();
  }

  #listen(): void {
    const body = this.#body;
    body.on("data", this.#onData);
    body.on("end", this.#onEnd);
    body.on("error", this.#onError);
    body.on("close", this.#onClose);
    // A 'data' listener starts the flow unless someone paused the body before.
    body.resume();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#queue.length > 0) {
      const batch = this.#queue.shift()!;
      if (this.#paused && this.#queue.length < MAX_QUEUED_BATCHES) this.#resumeBody();
      return Promise.resolve({ done: false, value: batch });
    }
    if (this.#failure) {
      // Like a generator that threw: the error once, then done.
      const { error } = this.#failure;
      this.#failure = undefined;
      return Promise.reject(error);
    }
    if (this.#stopped) return Promise.resolve(DONE);
    if (this.#resolve) return Promise.reject(new Error("UpstreamEventReader: one next() at a time"));
    if (this.#paused) this.#resumeBody();
    if (this.#idleTimer) this.#idleTimer.refresh();
    else this.#idleTimer = setTimeout(this.#onIdleTimer, this.#idle.idleMs);
    return new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /**
   * The consumer is done (client gone, failure handled): stop listening, clear the timer, destroy the body. A
   * read still waiting fails as cut off, as the iterators did (the body was aborted): it must not look like the
   * provider's end.
   */
  return(): Promise<IteratorResult<T>> {
    this.#queue.length = 0;
    this.#failure = undefined;
    this.#fail(prematureClose());
    this.#failure = undefined;
    return Promise.resolve(DONE);
  }

  readonly #onData = (chunk: Uint8Array) => {
    let batch: T | undefined;
    try {
      batch = this.#decoder.push(chunk);
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (batch !== undefined) this.#deliver(batch);
  };

  readonly #onEnd = () => {
    let batch: T | undefined;
    try {
      batch = this.#decoder.end();
    } catch (error) {
      // A stream cut mid-frame (the binary framing throws).
      this.#fail(error);
      return;
    }
    if (batch !== undefined) this.#deliver(batch);
    this.#stop();
    if (this.#queue.length === 0) this.#settle(DONE);
  };

  readonly #onError = (error: unknown) => this.#fail(error);

  readonly #onClose = () => {
    // After 'end' the reader has already stopped; a close before it is a cut-off answer.
    this.#fail(prematureClose());
  };

  readonly #onIdleTimer = () => {
    // Fired while the consumer was busy: the timer lapses until its next wait re-arms it.
    if (!this.#resolve) return;
    // Failed first, so that whatever the abort makes the body emit cannot replace the timeout.
    this.#fail(timeoutError(this.#idle.idleMs));
    this.#idle.onTimeout();
  };

  #deliver(batch: T): void {
    if (this.#resolve) {
      this.#settle({ done: false, value: batch });
      return;
    }
    this.#queue.push(batch);
    if (!this.#paused && this.#queue.length >= MAX_QUEUED_BATCHES && !this.#stopped) {
      this.#paused = true;
      this.#body.pause();
    }
  }

  #fail(error: unknown): void {
    if (this.#stopped) return;
    this.#stop();
    if (this.#reject) {
      const reject = this.#reject;
      this.#resolve = this.#reject = undefined;
      reject(error);
    } else {
      this.#failure = { error };
    }
  }

  /** Hands a result to the waiting read, if any. */
  #settle(result: IteratorResult<T>): void {
    const resolve = this.#resolve;
    if (!resolve) return;
    this.#resolve = this.#reject = undefined;
    resolve(result);
  }

  #resumeBody(): void {
    this.#paused = false;
    if (!this.#stopped) this.#body.resume();
  }

  /** No more input: detach, clear the timer and destroy the body (as the iterators' finally blocks did). */
  #stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#idleTimer);
    const body = this.#body;
    body.off("data", this.#onData);
    body.off("end", this.#onEnd);
    body.off("close", this.#onClose);
    // The 'error' listener stays (it ignores errors once stopped): destroying or aborting the body may still
    // emit one, which must not become an uncaught exception.
    body.destroy();
  }
}

/** UpstreamBatchReader of events decoded by an EventDecoder. */
export class UpstreamEventReader extends UpstreamBatchReader<UpstreamEvent[]> {
  constructor(body: Readable, decoder: EventDecoder, idle: IdleTimeout) {
    super(body, eventBatchDecoder(decoder), idle);
  }
}

/** What a Readable's async iterator reports for a body closed before its end (an abort, a dropped socket). */
function prematureClose(): Error {
  return Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" });
}
