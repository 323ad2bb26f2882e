import { SseDecoder } from "../../core/providers/stream/sse.ts";
import { type SseSource, sseResponse } from "../../core/inference/gateway/stream/sse-source.ts";

/**
 * A streamed answer of test handlers, built as the gateway builds its own (sseResponse): each value the
 * iterable yields becomes one `data:` event, then `data: [DONE]`. Cancelling returns the iterator.
 */
export function sseEvents(values: AsyncIterable<unknown>, headers?: Record<string, string>): Response {
  const iterator = values[Symbol.asyncIterator]();
  let ended = false;
  const source: SseSource = {
    async next() {
      if (ended) return null;
      const { done, value } = await iterator.next();
      if (!done) return `data: ${JSON.stringify(value)}\n\n`;
      ended = true;
      return "data: [DONE]\n\n";
    },
    async cancel() {
      ended = true;
      await iterator.return?.();
    },
  };
  return sseResponse(source, headers);
}

/** The data of each event of an SSE text, in order (`[DONE]` included). */
export function readSseEvents(text: string): string[] {
  const decoder = new SseDecoder();
  return [...decoder.push(Buffer.from(text)), ...decoder.end()].map((event) => event.data);
}
