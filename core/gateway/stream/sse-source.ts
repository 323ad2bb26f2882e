import { gatewayResponse, SSE_SOURCE } from "./response-headers.ts";

/**
 * A streamed (SSE) answer as text, for a server that writes it to its socket itself (the local server: head
 * and first chunk in one write, the last chunk with the end) instead of reading the Response's web stream. The
 * Response keeps a ReadableStream body built on the same source (Lambda and tests read that); whichever is
 * used first owns the source, so the answer is produced once.
 */
export { SSE_SOURCE };

export interface SseSource {
  /**
   * What to send the client next (one or more whole events, as text or as bytes relayed from the provider), or
   * null once the stream has ended. Not re-entrant.
   */
  next(): Promise<string | Uint8Array | null>;
  /** The client went away: stop producing and settle the bookkeeping. */
  cancel(): Promise<void>;
}

/**
 * The two ways to consume one source: `body` (a web stream, pulled only when read) and `direct`. The first
 * `next()`/`cancel()` through either one claims the source; the other's `next()` then fails and its `cancel()`
 * does nothing.
 */
export function sseBody(source: SseSource): { body: ReadableStream<Uint8Array>; direct: SseSource } {
  let owner: "body" | "direct" | undefined;
  const claim = (who: "body" | "direct") => {
    owner ??= who;
    return owner === who;
  };
  const claimed = () =>
    new Error(`this SSE source is already read through ${owner === "body" ? "its body" : "directly"}`);
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!claim("body")) throw claimed();
        const text = await source.next();
        if (text === null) controller.close();
        else controller.enqueue(typeof text === "string" ? Buffer.from(text) : text);
      },
      async cancel() {
        if (claim("body")) await source.cancel();
      },
    },
    // No read ahead: the body must not claim the source before someone reads it.
    { highWaterMark: 0 },
  );
  const direct: SseSource = {
    next: () => (claim("direct") ? source.next() : Promise.reject(claimed())),
    cancel: async () => {
      if (claim("direct")) await source.cancel();
    },
  };
  return { body, direct };
}

/** A Response whose body is `source` as a web stream, carrying the source itself for a server that can use it. */
export function sseResponse(source: SseSource, status: number, headers: Record<string, string>): Response {
  const { body, direct } = sseBody(source);
  return attachSseSource(gatewayResponse(body, status, headers), direct);
}

export function attachSseSource(response: Response, source: SseSource): Response {
  // Assigned, not defined: Object.defineProperty is markedly slower, and this runs on every streamed request.
  (response as unknown as Record<symbol, SseSource>)[SSE_SOURCE] = source;
  return response;
}

/** The source a response carries, if any. */
export function sseSourceOf(response: Response): SseSource | undefined {
  return (response as { [SSE_SOURCE]?: SseSource })[SSE_SOURCE];
}
