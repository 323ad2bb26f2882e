import type { UpstreamRequest } from "../providers/types.ts";
import { UpstreamError } from "../providers/types.ts";
import { CustomHostBlockedError, type Dispatcher } from "../security/custom-host.ts";

export interface UpstreamCall {
  response: Response;
  /** Stops the request timer (streams switch to an idle timeout once headers arrived). */
  clearTimer(): void;
  /** Reads the whole body as text within the remaining time; a timeout becomes a 408 UpstreamError. */
  text(): Promise<string>;
  /** Reads the whole body as bytes, like text(). */
  bytes(): Promise<Uint8Array>;
  /** Maps an error met while reading the body (timeout, client abort, network) to an UpstreamError. */
  failure(error: unknown): UpstreamError;
}

/**
 * One HTTP call to a provider, bounded by a timeout and cancelled when the client goes away.
 * Network failures become 502 and timeouts 408, as UpstreamErrors the routing layer can act on. Redirects are
 * never followed (a custom host could redirect to a private address): callers answer a 3xx as a 502
 * (`redirectError`). `dispatcher` is the SSRF-guarded connection pool for custom hosts.
 */
export async function fetchUpstream(
  request: UpstreamRequest,
  options: { timeoutMs: number; signal: AbortSignal; fetch?: typeof fetch; dispatcher?: Dispatcher },
): Promise<UpstreamCall> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), options.timeoutMs);
  const signal = AbortSignal.any([options.signal, timeout.signal]);
  const failure = (error: unknown) => {
    clearTimeout(timer);
    return timeout.signal.aborted ? timeoutError(options.timeoutMs) : transportFailure(error, options.signal.aborted);
  };
  let response: Response;
  try {
    const init: RequestInit & { dispatcher?: Dispatcher } = {
      method: request.method,
      headers: request.headers,
      body: request.body as BodyInit | undefined,
      signal,
      redirect: "manual",
    };
    if (options.dispatcher) init.dispatcher = options.dispatcher;
    response = await (options.fetch ?? fetch)(request.url, init);
  } catch (error) {
    throw failure(error);
  }
  return {
    response,
    clearTimer: () => clearTimeout(timer),
    async text() {
      try {
        return await response.text();
      } catch (error) {
        throw failure(error);
      } finally {
        clearTimeout(timer);
      }
    },
    async bytes() {
      try {
        return new Uint8Array(await response.arrayBuffer());
      } catch (error) {
        throw failure(error);
      } finally {
        clearTimeout(timer);
      }
    },
    failure: (error) => (error instanceof UpstreamError ? error : failure(error)),
  };
}

/** Maps a failed upstream call (client gone, blocked address, network) to an UpstreamError; timeouts are 408s. */
export function transportFailure(error: unknown, clientGone: boolean): UpstreamError {
  if (clientGone) return new UpstreamError(499, "The client closed the request.", { code: "client_closed_request" });
  const direct = error as { code?: string; message?: string; cause?: unknown };
  const cause = (direct.cause ?? direct) as { code?: string; message?: string };
  const blocked =
    direct instanceof CustomHostBlockedError ? direct : cause instanceof CustomHostBlockedError ? cause : undefined;
  if (blocked) {
    return new UpstreamError(400, `Custom host rejected: ${blocked.message}.`, {
      code: "invalid_custom_host",
      transport: true,
    });
  }
  return new UpstreamError(
    502,
    `Could not reach the provider: ${cause?.code ?? direct.code ?? cause?.message ?? direct.message}`,
    {
      code: "upstream_unreachable",
      transport: true,
    },
  );
}

export const timeoutError = (ms: number) =>
  new UpstreamError(408, `The request timed out after ${ms} ms.`, {
    type: "timeout_error",
    code: "request_timeout",
    transport: true,
  });

/** A 3xx from upstream: never followed (it could point anywhere, private addresses included). */
export function redirectError(response: { status: number; headers: Headers }): UpstreamError {
  const location = response.headers.get("location");
  return new UpstreamError(
    502,
    `The provider answered with a redirect (${response.status}${location ? ` to ${location.slice(0, 200)}` : ""}); the gateway does not follow redirects. Point the target at the final URL.`,
    { code: "upstream_redirect" },
  );
}

/** Iterates a source, failing with a timeout when no item arrives for `idleMs` (a stalled upstream stream). */
export async function* withIdleTimeout<T>(
  source: AsyncIterable<T>,
  idleMs: number,
  onTimeout: () => void,
): AsyncIterable<T> {
  const iterator = source[Symbol.asyncIterator]();
  // One timer for the whole stream, re-armed per item (no promise or timer per chunk). It only counts time
  // spent waiting for the source, not time the consumer (a slow client) takes.
  let waiting = false;
  let timedOut = false;
  const timer = setTimeout(function expire() {
    if (!waiting) return void timer.refresh();
    timedOut = true;
    onTimeout();
  }, idleMs);
  try {
    for (;;) {
      timer.refresh();
      waiting = true;
      let result: IteratorResult<T>;
      try {
        result = await iterator.next();
      } catch (error) {
        if (timedOut) throw timeoutError(idleMs);
        throw error;
      } finally {
        waiting = false;
      }
      if (timedOut) throw timeoutError(idleMs);
      if (result.done) return;
      yield result.value;
    }
  } finally {
    clearTimeout(timer);
    await iterator.return?.();
  }
}
