/**
 * A streamed (SSE) answer is a plain Response whose body is a ReadableStream: what any fetch-style host reads
 * (the Lambda adapter, tests). The text behind that body comes from an SseSource. A server that can write the
 * source to its socket itself (the local server: head and first chunk in one write, the last chunk with the
 * end) may take it with `takeSseSource(response)`: an optional hint, kept beside the Response (not on it), that a
 * host is free to ignore. Whichever is read first, body or source, owns it, so the answer is produced once.
 */

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
} as const;

export interface SseSource {
  /**
   * What to send the client next (one or more whole events, as text or as bytes relayed from the provider), or
   * null once the stream has ended. Not re-entrant.
   */
  next(): Promise<string | Uint8Array | null>;
  /** The client went away: stop producing and settle the bookkeeping. */
  cancel(): Promise<void>;
}

/** The sources of streamed Responses, for hosts that write them directly (see above). */
const directSources = new WeakMap<Response, SseSource>();

/** An SSE Response (200 unless told) whose body is `source` as a web stream. `headers` are added to the SSE ones. */
export function sseResponse(source: SseSource, headers: Record<string, string> = {}, status = 200): Response {
  const { body, direct } = sseBody(source);
  const response = new Response(body, { status, headers: { ...SSE_HEADERS, ...headers } });
  directSources.set(response, direct);
  return response;
}

/**
 * Takes the source of a streamed Response built by sseResponse, for a host that writes it itself (undefined
 * for any other Response, or once taken). Taking it also forgets it: a weak entry whose value holds a whole
 * stream's state, kept for the stream's life, made the garbage collector's work per streamed request double.
 */
export function takeSseSource(response: Response): SseSource | undefined {
  const source = directSources.get(response);
  if (source) directSources.delete(response);
  return source;
}

/**
 * The text of any streamed Response as a source: its SseSource when it has one (taken), else its body read as
 * it comes (a replayed cache hit, a Response from elsewhere).
 */
export function sseSourceOf(response: Response): SseSource {
  const source = takeSseSource(response);
  if (source) return source;
  const reader = response.body?.getReader();
  return {
    async next() {
      if (!reader) return null;
      const read = await reader.read();
      return read.done ? null : read.value;
    },
    async cancel() {
      await reader?.cancel().catch(() => {});
    },
  };
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
