/**
 * Server-sent events: `data: <json>\n\n` per event and a final `data: [DONE]`. Events are written as they
 * are produced by the source (pull-based, so a slow client applies back-pressure to the upstream read).
 */

const encoder = new TextEncoder();
const DONE = encoder.encode("data: [DONE]\n\n");

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
} as const;

/** Encodes one event; strings are sent as they are (already serialised JSON), objects are serialised. */
export function encodeEvent(data: unknown, event?: string): Uint8Array {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return encoder.encode(`${event ? `event: ${event}\n` : ""}data: ${payload}\n\n`);
}

export interface SseOptions {
  /** Send `data: [DONE]` after the source ends (OpenAI chat/completions style). Default true. */
  done?: boolean;
  /** Turns an error thrown by the source into a last event before the stream ends. */
  onError?: (error: unknown) => unknown;
  headers?: HeadersInit;
  status?: number;
}

export function sseStream(source: AsyncIterable<unknown>, options: SseOptions = {}): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  let finished = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (finished) return;
      try {
        const { done, value } = await iterator.next();
        if (!done) {
          controller.enqueue(value instanceof Uint8Array ? value : encodeEvent(value));
          return;
        }
        finished = true;
        if (options.done !== false) controller.enqueue(DONE);
        controller.close();
      } catch (error) {
        finished = true;
        if (options.onError) controller.enqueue(encodeEvent(options.onError(error)));
        if (options.done !== false && options.onError) controller.enqueue(DONE);
        controller.close();
      }
    },
    async cancel(reason) {
      finished = true;
      await iterator.return?.(reason);
    },
  });
}

export function sseResponse(source: AsyncIterable<unknown>, options: SseOptions = {}): Response {
  const headers = new Headers(options.headers);
  for (const [name, value] of Object.entries(SSE_HEADERS)) headers.set(name, value);
  return new Response(sseStream(source, options), { status: options.status ?? 200, headers });
}
