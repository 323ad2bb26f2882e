import type { UpstreamRequest } from "../providers/types.ts";
import { UpstreamError } from "../providers/types.ts";

/**
 * One HTTP call to a provider, bounded by a timeout and cancelled when the client goes away.
 * Network failures become 502 and timeouts 408, as UpstreamErrors the routing layer can act on.
 */
export async function fetchUpstream(
  request: UpstreamRequest,
  options: { timeoutMs: number; signal: AbortSignal; fetch?: typeof fetch },
): Promise<Response> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, timeout]);
  try {
    return await (options.fetch ?? fetch)(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body as BodyInit | undefined,
      signal,
      redirect: "manual",
    });
  } catch (error) {
    if (timeout.aborted) throw timeoutError(options.timeoutMs);
    if (options.signal.aborted) throw new UpstreamError(499, "The client closed the request.", { code: "client_closed_request" });
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new UpstreamError(502, `Could not reach the provider: ${cause?.code ?? cause?.message ?? (error as Error).message}`, {
      code: "upstream_unreachable",
    });
  }
}

export const timeoutError = (ms: number) =>
  new UpstreamError(408, `The request timed out after ${ms} ms.`, { type: "timeout_error", code: "request_timeout" });

/** Iterates a source, failing with a timeout when no item arrives for `idleMs` (a stalled upstream stream). */
export async function* withIdleTimeout<T>(source: AsyncIterable<T>, idleMs: number, onTimeout: () => void): AsyncIterable<T> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          onTimeout();
          reject(timeoutError(idleMs));
        }, idleMs);
      });
      let result: IteratorResult<T>;
      try {
        result = await Promise.race([iterator.next(), stalled]);
      } finally {
        clearTimeout(timer);
      }
      if (result.done) return;
      yield result.value;
    }
  } finally {
    await iterator.return?.();
  }
}
