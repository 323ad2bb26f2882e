import type { Readable } from "node:stream";
import type { UpstreamRequest } from "../providers/types.ts";
import { UpstreamError } from "../providers/types.ts";
import type { Dispatcher } from "../security/custom-host.ts";
import { AttemptAbort } from "./attempt-abort.ts";
import { timeoutError, transportFailure } from "./upstream-fetch.ts";

/** The parts of an undici Dispatcher this module uses (Node ships undici; its Agent has `request`). */
interface RawDispatcher {
  request(options: {
    origin: string;
    path: string;
    method: string;
    headers: Record<string, string>;
    body?: string | Uint8Array;
    signal?: AbortSignal;
  }): Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined>; body: Readable }>;
}

export interface UpstreamReply {
  status: number;
  /** Built on demand (error paths read retry-after and location; the success path never needs it). */
  readonly headers: Headers;
  /** The body as Node stream chunks (no web-stream wrapping on the hot path). */
  body: AsyncIterable<Uint8Array>;
  /** Stops the request timer (streams switch to an idle timeout once headers arrived). */
  clearTimer(): void;
  /** Ends the attempt (a stalled stream, a client that cancelled): the body stops with an error. */
  abort(): void;
  /** The attempt is over: timer and client-signal listener removed. */
  release(): void;
  /** Reads the whole body as text within the remaining time; a timeout becomes a 408 UpstreamError. */
  text(): Promise<string>;
  /** Throws the body away (redirects, errors not worth reading). */
  discard(): Promise<void>;
}

let globalDispatcher: Promise<RawDispatcher> | undefined;

/** Node's shared undici Agent (created by the first fetch), with its keep-alive connection pools. */
function sharedDispatcher(): Promise<RawDispatcher> {
  globalDispatcher ??= (async () => {
    const globals = globalThis as Record<symbol, unknown>;
    const find = () =>
      (globals[Symbol.for("undici.globalDispatcher.2")] ?? globals[Symbol.for("undici.globalDispatcher.1")]) as
        | RawDispatcher
        | undefined;
    if (!find()) await fetch("data:,").catch(() => undefined);
    const dispatcher = find();
    if (typeof dispatcher?.request !== "function") throw new Error("Node's undici dispatcher is not available");
    return dispatcher;
  })();
  return globalDispatcher;
}

/**
 * One HTTP call to a provider through undici's dispatcher API: the same pools, timeouts and SSRF-guarded
 * dispatcher as fetch, without building WHATWG Request/Response objects and web streams per call (the hot path
 * of chat, completions and embeddings). Redirects are never followed. Failures map like fetchUpstream's.
 */
export async function requestUpstream(
  request: UpstreamRequest,
  options: { timeoutMs: number; signal: AbortSignal; dispatcher?: Dispatcher },
): Promise<UpstreamReply> {
  const attempt = new AttemptAbort(options.signal, options.timeoutMs);
  const failure = (error: unknown): UpstreamError => {
    attempt.release();
    if (error instanceof UpstreamError) return error;
    if (attempt.timedOut) return timeoutError(options.timeoutMs);
    return transportFailure(error, attempt.clientGone);
  };
  const url = new URL(request.url);
  let reply: Awaited<ReturnType<RawDispatcher["request"]>>;
  try {
    const dispatcher = (options.dispatcher as RawDispatcher | undefined) ?? (await sharedDispatcher());
    reply = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: attempt.signal,
    });
  } catch (error) {
    throw failure(error);
  }
  return new DispatcherReply(reply, attempt, failure);
}

/**
 * The answer of one dispatcher call. A class (its `headers` getter on the prototype), not an object literal with
 * a getter: V8 builds each such literal with its own accessor pair for the getter, and measured, the literal and
 * everything its getter's closure reaches (the undici request, the body: the whole call) then outlived young-
 * generation GCs and were promoted to the old one: about 5 KB per request, against 0.5 KB with this class, and
 * three times the mark-compacts. (A microbenchmark of 3 million objects: 228 MB promoted for literals with a
 * getter, none for class instances.)
 */
class DispatcherReply implements UpstreamReply {
  readonly status: number;
  readonly body: Readable;
  readonly #rawHeaders: Record<string, string | string[] | undefined>;
  readonly #attempt: AttemptAbort;
  readonly #failure: (error: unknown) => UpstreamError;
  #headers: Headers | undefined;

  constructor(
    reply: Awaited<ReturnType<RawDispatcher["request"]>>,
    attempt: AttemptAbort,
    failure: (error: unknown) => UpstreamError,
  ) {
    this.status = reply.statusCode;
    this.body = reply.body;
    this.#rawHeaders = reply.headers;
    this.#attempt = attempt;
    this.#failure = failure;
    // An aborted or destroyed body emits 'error'; readers see it through their iterator, and a body nobody reads
    // any more (redirect discarded, client gone) must not turn it into an uncaught exception.
    this.body.on("error", ignoreError);
  }

  get headers(): Headers {
    if (!this.#headers) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(this.#rawHeaders)) {
        if (Array.isArray(value)) for (const item of value) headers.append(name, item);
        else if (value !== undefined) headers.set(name, value);
      }
      this.#headers = headers;
    }
    return this.#headers;
  }

  clearTimer(): void {
    this.#attempt.clearTimer();
  }

  abort(): void {
    this.#attempt.abort();
  }

  release(): void {
    this.#attempt.release();
  }

  async text(): Promise<string> {
    try {
      return await readAll(this.body);
    } catch (error) {
      throw this.#failure(error);
    } finally {
      this.#attempt.release();
    }
  }

  async discard(): Promise<void> {
    this.#attempt.release();
    this.body.destroy();
  }
}

function ignoreError(): void {}

/**
 * A whole body as text, from its 'data' and 'end' events: a stream's async iterator costs a promise and a
 * 'readable' round trip per chunk, which showed on the hot path of every JSON answer.
 */
function readAll(body: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    body.on("data", (chunk: Buffer) => chunks.push(chunk));
    body.once("end", () =>
      resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")),
    );
    body.once("error", reject);
    body.once("close", () => {
      // Destroyed before its end (an abort): the 'error' above usually came first; this covers a silent close.
      if (!body.readableEnded) reject(new Error("the provider's answer was cut off"));
    });
  });
}
