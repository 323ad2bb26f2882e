import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { Dispatcher } from "undici";
import type { UpstreamRequest } from "../../providers/types.ts";
import { UPSTREAM_TOO_LARGE } from "../../http/errors.ts";
import { UpstreamError } from "../../providers/types.ts";
import type { TrustedHosts } from "../../security/custom-host.ts";
import { guardedDispatcher } from "../../security/guarded-dispatcher.ts";
import { maxUpstreamAnswerBytes } from "./answer-limit.ts";
import { AttemptAbort } from "./attempt.ts";
import { timeoutError, transportFailure } from "./failures.ts";

/**
 * The one HTTP client of the gateway's upstream calls (inference, pass-through): undici's public
 * `Dispatcher.request` over the SSRF-guarded keep-alive pool (core/security/guarded-dispatcher.ts), so every
 * connection is checked at connect time whatever built its URL. No WHATWG Request/Response or web streams per
 * call: the body is undici's Node stream. Redirects are never followed (callers answer a 3xx as a 502, see
 * redirectError); timeouts become 408 and transport failures 502 (failures.ts); the client leaving, 499.
 */

type DispatcherAnswer = Dispatcher.ResponseData;

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
  /**
   * Reads the whole body as text within the remaining time; a timeout becomes a 408 UpstreamError, a body over
   * `limit` bytes (default GATEWAY_MAX_UPSTREAM_RESPONSE_BYTES) a 502 `upstream_response_too_large` one.
   */
  text(limit?: number): Promise<string>;
  /** Reads the whole body as bytes, like text() (pass-through keeps a provider's error as it came). */
  bytes(limit?: number): Promise<Uint8Array>;
  /** Maps an error met while reading the body (timeout, client gone, network) to an UpstreamError. */
  failure(error: unknown): UpstreamError;
  /** Throws the body away (redirects, errors not worth reading). */
  discard(): Promise<void>;
}

/**
 * One HTTP call to a provider, bounded by `timeoutMs` and cancelled when `signal` (the client) aborts.
 * `trusted` is TRUSTED_CUSTOM_HOSTS: the only private or reserved addresses the connection may reach.
 */
export async function requestUpstream(
  request: UpstreamRequest,
  options: { timeoutMs: number; signal: AbortSignal; trusted: TrustedHosts },
): Promise<UpstreamReply> {
  const attempt = new AttemptAbort(options.signal, options.timeoutMs);
  const failure = (error: unknown): UpstreamError => {
    attempt.release();
    if (error instanceof UpstreamError) return error;
    if (attempt.timedOut) return timeoutError(options.timeoutMs);
    return transportFailure(error, attempt.clientGone);
  };
  let reply: DispatcherAnswer;
  try {
    const url = new URL(request.url);
    const pool = guardedDispatcher(options.trusted);
    const dispatcher = pool instanceof Promise ? await pool : pool;
    reply = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers: request.headers,
      body: request.body instanceof ReadableStream ? streamBody(request.body) : request.body,
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
  readonly #rawHeaders: DispatcherAnswer["headers"];
  readonly #attempt: AttemptAbort;
  readonly #failure: (error: unknown) => UpstreamError;
  #headers: Headers | undefined;

  constructor(reply: DispatcherAnswer, attempt: AttemptAbort, failure: (error: unknown) => UpstreamError) {
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

  async text(limit?: number): Promise<string> {
    return (await this.bytes(limit)).toString("utf8");
  }

  async bytes(limit = maxUpstreamAnswerBytes()): Promise<Buffer> {
    try {
      return await readAll(this.body, limit);
    } catch (error) {
      throw this.#failure(error);
    } finally {
      this.#attempt.release();
    }
  }

  failure(error: unknown): UpstreamError {
    return this.#failure(error);
  }

  async discard(): Promise<void> {
    this.#attempt.release();
    this.body.destroy();
  }
}

function ignoreError(): void {}

/** A web stream body as the Node stream undici sends chunk by chunk (file uploads). */
function streamBody(body: ReadableStream<Uint8Array>): Readable {
  return Readable.fromWeb(body as NodeReadableStream<Uint8Array>);
}

/** An answer over the limit: a failed target (a fallback moves on), 502 `upstream_response_too_large`. */
function answerTooLarge(limit: number): UpstreamError {
  const setting = limit === maxUpstreamAnswerBytes() ? " (GATEWAY_MAX_UPSTREAM_RESPONSE_BYTES)" : "";
  return new UpstreamError(502, `The upstream's answer is larger than the limit of ${limit} bytes${setting}.`, {
    code: UPSTREAM_TOO_LARGE,
  });
}

/**
 * A whole body, from its 'data' and 'end' events: a stream's async iterator costs a promise and a
 * 'readable' round trip per chunk, which showed on the hot path of every JSON answer. Past `limit` bytes the
 * body is destroyed (the connection closed, nothing more read) and the read fails.
 */
function readAll(body: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on("data", (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= limit) return void chunks.push(chunk);
      chunks.length = 0;
      reject(answerTooLarge(limit));
      body.destroy();
    });
    body.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    body.once("error", reject);
    body.once("close", () => {
      // Destroyed before its end (an abort): the 'error' above usually came first; this covers a silent close.
      if (!body.readableEnded) reject(new Error("the provider's answer was cut off"));
    });
  });
}
